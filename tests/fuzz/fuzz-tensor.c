/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Tensor files (.pb TensorProto and .npy) from untrusted hands: load or refuse, never crash. */
#include "fb-onnx-import.h"
#include "fb-tensor-io.h"

#include <glib/gstdio.h>
#include <stdint.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static char *dir;

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* The first byte picks the format, so one corpus covers both readers. */
  const char *name = size > 0 && (data[0] & 1) ? "t.npy" : "t.pb";
  g_autofree char *path = NULL;

  if (dir == NULL)
    dir = g_dir_make_tmp ("fb-fuzz-XXXXXX", NULL);
  path = g_build_filename (dir, name, NULL);
  if (size > 0 && g_file_set_contents (path, (const char *) data + 1, (gssize) size - 1, NULL))
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(FbTensor) t = fb_tensor_load_file (path, NULL, &error);
      if ((t == NULL) == (error == NULL))
        __builtin_trap ();
      g_unlink (path);
    }
  return 0;
}
