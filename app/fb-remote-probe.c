/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a host has to run on, asked with one short shell script over ssh (fb_remote_exec): its
 * NVIDIA GPUs and driver (nvidia-smi, else the driver's /proc files), the CUDA libraries the
 * cuda target opens at run time, found where the runtime looks for them (fb-cuda-api.c: the
 * FUSEBENCH_CUDA_LIBRARY_PATH and LD_LIBRARY_PATH folders, the driver's and the toolkits'
 * folders, the loader's cache), and its processor. No runner is needed for it, so a host is
 * described before anything is copied there. */
#include "fb-config.h"
#include "fb-remote.h"

#include <string.h>

/* The sonames the runtime and the profiler open (fb-cuda-api.c, fb-cupti-live.c), with the
 * names the device line gives them. The driver's library comes first: without it there is no
 * cuda target. */
static const struct {
  const char *soname;
  const char *label;
} cuda_libraries[] = {
  { "libcuda.so.1", "driver" },
  { "libcublasLt.so.13", "cuBLASLt" },
  { "libcudnn.so.9", "cuDNN" },
  { "libcupti.so.13", "CUPTI" },
};

/* $@: the sonames. Prints "arch M", "processor NAME", "cores N", "gpu NAME, DRIVER" per GPU that
 * nvidia-smi lists, "model NAME" per GPU the driver's /proc files list, "driver VERSION", then
 * "lib SONAME PATH" or "nolib SONAME" for each soname. Nothing here fails the script: a host
 * without a GPU answers with fewer lines. */
static const char probe_script[] =
  "A=$(uname -m); echo \"arch $A\"; "
  "sed -n 's/^model name[[:space:]]*: */processor /p' /proc/cpuinfo 2>/dev/null | head -n 1; "
  "echo \"cores $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 0)\"; "
  "if command -v nvidia-smi >/dev/null 2>&1; then "
  "nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | "
  "sed -n 's/^\\(.*, [0-9][0-9.]*\\)$/gpu \\1/p'; fi; "
  "for f in /proc/driver/nvidia/gpus/*/information; do [ -r \"$f\" ] && "
  "sed -n 's/^Model:[[:space:]]*/model /p' \"$f\"; done; "
  "[ -r /proc/driver/nvidia/version ] && sed -n "
  "'s/.*Kernel Module[^0-9]*\\([0-9][0-9.]*\\).*/driver \\1/p' /proc/driver/nvidia/version | "
  "head -n 1; "
  "D=$(printf '%s:%s:%s' \"${FUSEBENCH_CUDA_LIBRARY_PATH:-}\" \"${LD_LIBRARY_PATH:-}\" "
  "\"${CUDA_HOME:+$CUDA_HOME/lib64:$CUDA_HOME/targets/$A-linux/lib}\" | tr ':' ' '); "
  "for l in \"$@\"; do p=; for d in $D /usr/lib/$A-linux-gnu /usr/lib /usr/lib64 "
  "/usr/local/nvidia/lib64 /usr/lib/wsl/lib /usr/local/cuda/lib64 "
  "/usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda*/targets/$A-linux/lib "
  "/opt/nvidia/cudnn/lib; do if [ -e \"$d/$l\" ]; then p=\"$d/$l\"; break; fi; done; "
  "[ -n \"$p\" ] || p=$({ ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null | "
  "sed -n \"s|^[[:space:]]*$l .*=> ||p\" | head -n 1); "
  "if [ -n \"$p\" ]; then echo \"lib $l $p\"; else echo \"nolib $l\"; fi; done; exit 0";

void
fb_remote_device_free (FbRemoteDevice *device)
{
  if (device == NULL)
    return;
  g_free (device->arch);
  g_free (device->cpu);
  g_ptr_array_unref (device->gpus);
  g_free (device->driver);
  g_ptr_array_unref (device->libraries);
  g_ptr_array_unref (device->missing);
  g_free (device);
}


gboolean
fb_remote_device_has_gpu (const FbRemoteDevice *device)
{
  g_return_val_if_fail (device != NULL, FALSE);
  return device->gpus->len > 0 && device->has_driver_library;
}

static const char *
label_of (const char *soname)
{
  for (guint i = 0; i < G_N_ELEMENTS (cuda_libraries); i++)
    if (g_str_equal (cuda_libraries[i].soname, soname))
      return cuda_libraries[i].label;
  return soname;
}

/* "NVIDIA H200" or "2 × NVIDIA H200", "NVIDIA H200 + NVIDIA L4". */
static void
append_gpus (GString *s, GPtrArray *gpus)
{
  for (guint i = 0; i < gpus->len;)
    {
      const char *name = g_ptr_array_index (gpus, i);
      guint same = 1;

      while (i + same < gpus->len && g_str_equal (g_ptr_array_index (gpus, i + same), name))
        same++;
      if (i > 0)
        g_string_append (s, " + ");
      if (same > 1)
        g_string_append_printf (s, "%u × ", same);
      g_string_append (s, name);
      i += same;
    }
}

char *
fb_remote_device_describe (const FbRemoteDevice *device)
{
  g_autoptr(GString) s = g_string_new (NULL);

  g_return_val_if_fail (device != NULL, NULL);
  if (device->gpus->len == 0)
    g_string_append (s, "no GPU: cpu only");
  else
    {
      append_gpus (s, device->gpus);
      if (!device->has_driver_library)
        g_string_append (s, ", but not its driver's library (libcuda.so.1): cpu only");
      else
        {
          if (device->driver != NULL)
            g_string_append_printf (s, " · driver %s", device->driver);
          g_string_append (s, " · CUDA libraries: ");
          for (guint i = 0; i < device->libraries->len; i++)
            g_string_append_printf (s, "%s%s", i > 0 ? ", " : "",
                                    label_of (g_ptr_array_index (device->libraries, i)));
          if (device->libraries->len == 0)
            g_string_append (s, "none");
          for (guint i = 0; i < device->missing->len; i++)
            g_string_append_printf (s, "%s%s", i == 0 ? " · missing: " : ", ",
                                    (char *) g_ptr_array_index (device->missing, i));
        }
    }
  if (device->cpu != NULL)
    g_string_append_printf (s, " · %s, %u cores", device->cpu, device->cores);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static FbRemoteDevice *
parse (const char *text)
{
  FbRemoteDevice *d = g_new0 (FbRemoteDevice, 1);
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr(GPtrArray) models = g_ptr_array_new_with_free_func (g_free);

  d->gpus = g_ptr_array_new_with_free_func (g_free);
  d->libraries = g_ptr_array_new_with_free_func (g_free);
  d->missing = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *line = g_strstrip (lines[i]);
      char *value = strchr (line, ' ');

      if (value == NULL)
        continue;
      *value++ = '\0';
      if (g_str_equal (line, "arch") && d->arch == NULL)
        d->arch = g_strdup (value);
      else if (g_str_equal (line, "processor") && d->cpu == NULL)
        d->cpu = g_strdup (g_strstrip (value));
      else if (g_str_equal (line, "cores"))
        d->cores = (guint) g_ascii_strtoull (value, NULL, 10);
      else if (g_str_equal (line, "gpu"))
        {
          /* "NAME, DRIVER": the name may hold commas, the version does not. */
          char *comma = strrchr (value, ',');
          if (comma == NULL)
            continue;
          *comma = '\0';
          g_ptr_array_add (d->gpus, g_strdup (g_strstrip (value)));
          if (d->driver == NULL)
            d->driver = g_strdup (g_strstrip (comma + 1));
        }
      else if (g_str_equal (line, "model"))
        g_ptr_array_add (models, g_strdup (g_strstrip (value)));
      else if (g_str_equal (line, "driver") && d->driver == NULL)
        d->driver = g_strdup (value);
      else if (g_str_equal (line, "lib"))
        {
          char *path = strchr (value, ' ');
          if (path != NULL)
            *path = '\0';
          if (g_str_equal (value, cuda_libraries[0].soname))
            d->has_driver_library = TRUE;
          else
            g_ptr_array_add (d->libraries, g_strdup (value));
        }
      else if (g_str_equal (line, "nolib"))
        g_ptr_array_add (d->missing, g_strdup (value));
    }
  /* Without nvidia-smi, the driver's own list of the GPUs it drives. */
  if (d->gpus->len == 0)
    g_ptr_array_extend_and_steal (d->gpus, g_steal_pointer (&models));
  return d;
}

FbRemoteDevice *
fb_remote_probe (FbRemote *self, GCancellable *cancellable, GError **error)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autoptr(GBytes) out = NULL;
  g_autofree char *err = NULL, *text = NULL;
  int status;
  gsize size;
  const char *data;

  g_return_val_if_fail (FB_IS_REMOTE (self), NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cuda_libraries); i++)
    g_ptr_array_add (args, (gpointer) cuda_libraries[i].soname);
  g_ptr_array_add (args, NULL);
  if (!fb_remote_exec (self, probe_script, (const char * const *) args->pdata, -1, NULL, NULL,
                       &out, &status, &err, cancellable, error))
    return NULL;
  if (status != 0)
    {
      fb_remote_set_script_error (self, "asking for its devices", status, err, error);
      return NULL;
    }
  data = g_bytes_get_data (out, &size);
  text = g_strndup (data ? data : "", size);
  return parse (text);
}
