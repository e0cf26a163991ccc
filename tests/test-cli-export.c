/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fusebench export, through the real binary, each file read back by its own reader: the SVG
 * parsed as XML, the PNG decoded by Cairo, the PDF read by Poppler's pdfinfo, the DOT laid out by Graphviz's
 * `dot -Tplain`, the ONNX model run by fusebench on the sample's test data (it must compute
 * what the original computes) and checked by onnx.checker. */
#include "fb-config.h"
#include "fb-test-cli.h"

#include <glib/gstdio.h>
#include <string.h>

#if FB_HAVE_GTK
#include <cairo.h>
#endif

typedef struct {
  char *dir;
  char *model;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->dir = g_dir_make_tmp ("fb-export-XXXXXX", &error);
  g_assert_no_error (error);
  f->model = test_source_path ("data", "models", "sample-cnn", "model.onnx", NULL);
}

static void
remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->model);
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char * const *) a, *(char * const *) b);
}

/* The names in dir, sorted, comma-separated: what an export left behind. */
static char *
listing (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  while ((name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return g_strjoinv (",", (char **) names->pdata);
}

static char *
export_to (Fixture *f, const char *stage, const char *format, const char *name,
           const char *extra)
{
  char *out = g_build_filename (f->dir, name, NULL);
  g_autoptr(TestRun) run = test_run_fusebench ("export", f->model, "--stage", stage, "--format",
                                               format, "-o", out, extra, NULL);

  if (run->status != 0)
    g_printerr ("%s", run->err);
  g_assert_cmpint (run->status, ==, 0);
  g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));
  return out;
}

/* ---- SVG: well-formed XML whose root is <svg> with a size, and that draws something ------- */

typedef struct {
  guint  depth;
  gboolean root_svg;
  gboolean sized;
  guint  drawn;       /* <path>, <use>, <rect> and <image> elements */
} SvgScan;

static void
svg_start (GMarkupParseContext *context, const char *element, const char **names,
           const char **values, gpointer data, GError **error)
{
  SvgScan *scan = data;

  if (scan->depth++ == 0)
    {
      scan->root_svg = g_str_equal (element, "svg");
      for (guint i = 0; names[i]; i++)
        if (g_str_equal (names[i], "width") && g_ascii_strtod (values[i], NULL) > 50)
          scan->sized = TRUE;
    }
  if (g_str_equal (element, "path") || g_str_equal (element, "use") ||
      g_str_equal (element, "rect") || g_str_equal (element, "image"))
    scan->drawn++;
}

static void
svg_end (GMarkupParseContext *context, const char *element, gpointer data, GError **error)
{
  ((SvgScan *) data)->depth--;
}

static void
test_svg (Fixture *f, gconstpointer data)
{
  const char *stages[] = { "import", "fuse-epilogue", "final" };

  if (!FB_HAVE_GTK)
    {
      g_autofree char *out = g_build_filename (f->dir, "graph.svg", NULL);
      g_autoptr(TestRun) run = test_run_fusebench ("export", f->model, "--stage", "final",
                                                   "--format", "svg", "-o", out, NULL);
      g_assert_cmpint (run->status, ==, 2);
      g_assert_nonnull (strstr (run->err, "-Dgtk=false"));
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
      return;
    }
  for (guint i = 0; i < G_N_ELEMENTS (stages); i++)
    {
      g_autofree char *name = g_strdup_printf ("%s.svg", stages[i]);
      g_autofree char *out = export_to (f, stages[i], "svg", name, NULL);
      g_autofree char *text = NULL;
      g_autoptr(GError) error = NULL;
      GMarkupParser parser = { svg_start, svg_end, NULL, NULL, NULL };
      SvgScan scan = { 0 };
      GMarkupParseContext *context = g_markup_parse_context_new (&parser, 0, &scan, NULL);

      g_assert_true (g_file_get_contents (out, &text, NULL, &error));
      g_assert_true (g_markup_parse_context_parse (context, text, -1, &error) &&
                     g_markup_parse_context_end_parse (context, &error));
      g_assert_no_error (error);
      g_markup_parse_context_free (context);
      g_assert_true (scan.root_svg);
      g_assert_true (scan.sized);
      /* A box, its text and an edge per node at least: the sample has eleven nodes. */
      g_assert_cmpuint (scan.drawn, >, 30);
    }
}

/* ---- PNG and PDF ------------------------------------------------------------------------- */

static void
test_png (Fixture *f, gconstpointer data)
{
#if FB_HAVE_GTK
  g_autofree char *out = export_to (f, "final", "png", "graph.png", NULL);
  cairo_surface_t *image = cairo_image_surface_create_from_png (out);
  int w, h, stride;
  guint dark = 0;
  const guint8 *px;

  g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);
  w = cairo_image_surface_get_width (image);
  h = cairo_image_surface_get_height (image);
  g_assert_cmpint (w, >, 100);
  g_assert_cmpint (h, >, w);   /* the sample is a chain: taller than wide */
  cairo_surface_flush (image);
  px = cairo_image_surface_get_data (image);
  stride = cairo_image_surface_get_stride (image);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      if ((*(const guint32 *) (px + y * stride + 4 * x) & 0xff) < 0x80)
        dark++;
  /* Text and borders: more than a few stray pixels, much less than the whole picture. */
  g_assert_cmpuint (dark, >, 1000);
  g_assert_cmpuint (dark, <, (guint) (w * h / 2));
  cairo_surface_destroy (image);
#else
  g_test_message ("pictures need the GTK build; test_svg checks what this build says");
#endif
}

#if FB_HAVE_GTK
/* Pixels of a PNG whose colour is far from grey (heat colours; the plain picture's boxes are
 * pale pastels and its text black), counted. */
static guint
saturated_pixels (const char *path)
{
  cairo_surface_t *image = cairo_image_surface_create_from_png (path);
  g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);
  cairo_surface_flush (image);
  int w = cairo_image_surface_get_width (image), h = cairo_image_surface_get_height (image);
  int stride = cairo_image_surface_get_stride (image);
  const guint8 *px = cairo_image_surface_get_data (image);
  guint n = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        guint32 v = *(const guint32 *) (px + y * stride + 4 * x);
        int r = (v >> 16) & 0xff, g = (v >> 8) & 0xff, b = v & 0xff;
        n += MAX (r, MAX (g, b)) - MIN (r, MIN (g, b)) > 120;
      }
  cairo_surface_destroy (image);
  return n;
}
#endif

/* --profile paints a profile on the picture of any stage; a profile of other toggles is
 * refused, naming what differs, and nothing is written. */
static void
test_profile (Fixture *f, gconstpointer data)
{
#if FB_HAVE_GTK
  g_autofree char *profile = test_source_path ("tests", "fixtures", "sample-cnn.profile.json", NULL);
  g_autofree char *plain = g_build_filename (f->dir, "plain.png", NULL);
  const char *stages[] = { "import", "fuse-epilogue", "final" };
  g_autoptr(TestRun) base = test_run_fusebench ("export", f->model, "--stage", "import",
                                                "--format", "png", "--layout", "nhwc", "-o",
                                                plain, NULL);
  g_assert_cmpint (base->status, ==, 0);
  guint plain_heat = saturated_pixels (plain);
  for (guint i = 0; i < G_N_ELEMENTS (stages); i++)
    {
      g_autofree char *name = g_strdup_printf ("%s.png", stages[i]);
      g_autofree char *out = g_build_filename (f->dir, name, NULL);
      g_autoptr(TestRun) run = test_run_fusebench ("export", f->model, "--stage", stages[i],
                                                   "--format", "png", "--layout", "nhwc",
                                                   "--profile", profile, "--metric", "time",
                                                   "-o", out, NULL);
      if (run->status != 0)
        g_printerr ("%s", run->err);
      g_assert_cmpint (run->status, ==, 0);
      g_assert_cmpuint (saturated_pixels (out), >, plain_heat + 2000);
    }
  g_autofree char *refused = g_build_filename (f->dir, "refused.png", NULL);
  g_autoptr(TestRun) other = test_run_fusebench ("export", f->model, "--stage", "final", "--format",
                                                 "png", "--layout", "nchw", "--profile", profile,
                                                 "-o", refused, NULL);
  g_assert_cmpint (other->status, ==, 2);
  g_assert_nonnull (strstr (other->err, "layout"));
  g_assert_false (g_file_test (refused, G_FILE_TEST_EXISTS));
  g_autoptr(TestRun) dot = test_run_fusebench ("export", f->model, "--stage", "final", "--format",
                                               "dot", "--profile", profile, "-o", refused, NULL);
  g_assert_cmpint (dot->status, ==, 2);
  g_autoptr(TestRun) metric = test_run_fusebench ("export", f->model, "--stage", "final", "--format",
                                                  "png", "--layout", "nhwc", "--profile", profile,
                                                  "--metric", "speed", "-o", refused, NULL);
  g_assert_cmpint (metric->status, ==, 2);
  g_assert_nonnull (strstr (metric->err, "speed"));
#else
  g_test_message ("pictures need the GTK build");
#endif
}

static void
test_pdf (Fixture *f, gconstpointer data)
{
#if FB_HAVE_GTK
  g_autofree char *out = export_to (f, "final", "pdf", "graph.pdf", NULL);
  g_autofree char *bytes = NULL;
  gsize size;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_get_contents (out, &bytes, &size, &error));
  g_assert_cmpuint (size, >, 1000);
  g_assert_true (g_str_has_prefix (bytes, "%PDF-1."));
  g_assert_nonnull (g_strstr_len (bytes + size - 64, 64, "%%EOF"));
  /* Poppler reads it: one page, the picture's size. */
  {
    g_autofree char *pdfinfo = g_find_program_in_path ("pdfinfo");
    g_autofree char *info = NULL;
    int status;

    g_assert_nonnull (pdfinfo);   /* poppler-utils is in scripts/debian-packages.txt */
    char *argv[] = { pdfinfo, out, NULL };
    g_assert_true (g_spawn_sync (NULL, argv, NULL, 0, NULL, NULL, &info, NULL, &status, &error));
    g_assert_true (g_spawn_check_wait_status (status, NULL));
    g_assert_true (g_regex_match_simple ("^Pages: +1$", info, G_REGEX_MULTILINE, 0));
    g_assert_nonnull (strstr (info, "Page size:"));
  }
#endif
}

/* ---- DOT: Graphviz lays it out, every node of the final stage is in it ------------------ */

static void
test_dot (Fixture *f, gconstpointer data)
{
  g_autofree char *out = export_to (f, "final", "dot", "graph.dot", NULL);
  g_autofree char *dot = g_find_program_in_path ("dot");
  g_autofree char *plain = NULL, *err = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  guint nodes = 0, edges = 0;
  int status;

  g_assert_nonnull (dot);   /* graphviz is in scripts/debian-packages.txt */
  char *argv[] = { dot, "-Tplain", out, NULL };
  g_assert_true (g_spawn_sync (NULL, argv, NULL, 0, NULL, NULL, &plain, &err, &status, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (err, ==, "");
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  lines = g_strsplit (plain, "\n", -1);
  g_assert_true (g_str_has_prefix (lines[0], "graph "));
  for (guint i = 0; lines[i]; i++)
    {
      nodes += g_str_has_prefix (lines[i], "node ");
      edges += g_str_has_prefix (lines[i], "edge ");
    }
  /* Input, eleven nodes of the final stage (five fused), output; a chain with one skip. */
  g_assert_cmpuint (nodes, ==, 1 + 11 + 1);
  g_assert_cmpuint (edges, ==, nodes - 1 + 1);
}

/* ---- ONNX: fusebench and onnx.checker accept it, and it computes what the original does -- */

static void
check_with_fusebench (Fixture *f, const char *onnx)
{
  g_autofree char *case_dir = g_build_filename (f->dir, "case", NULL);
  g_autofree char *data_dir = g_build_filename (case_dir, "test_data_set_0", NULL);
  g_autofree char *model = g_build_filename (case_dir, "model.onnx", NULL);
  g_autofree char *bytes = NULL;
  gsize size;
  g_autoptr(GError) error = NULL;
  g_autofree char *sample = test_source_path ("data", "models", "sample-cnn", "test_data_set_0",
                                              NULL);
  g_autoptr(GDir) dir = g_dir_open (sample, 0, &error);
  const char *name;

  remove_tree (case_dir);
  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir_with_parents (data_dir, 0755), ==, 0);
  g_assert_true (g_file_get_contents (onnx, &bytes, &size, &error));
  g_assert_true (g_file_set_contents (model, bytes, size, &error));
  /* The sample's inputs and the outputs ONNX Runtime computed from the original. */
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *from = g_build_filename (sample, name, NULL);
      g_autofree char *to = g_build_filename (data_dir, name, NULL);
      g_autofree char *t = NULL;
      g_assert_true (g_file_get_contents (from, &t, &size, &error));
      g_assert_true (g_file_set_contents (to, t, size, &error));
    }
  /* The interpreter runs it, then the CPU target compiles it again from scratch: the passes
   * fuse the inlined members again. */
  {
    g_autoptr(TestRun) run = test_run_fusebench ("check", case_dir, NULL);
    g_assert_cmpint (run->status, ==, 0);
    g_assert_nonnull (strstr (run->out, "1 passed, 0 failed"));
  }
  {
    g_autoptr(TestRun) run = test_run_fusebench ("check", case_dir, "--target", "cpu", NULL);
    g_assert_cmpint (run->status, ==, 0);
    g_assert_nonnull (strstr (run->out, "1 passed, 0 failed"));
  }
}

static gboolean
have_python_onnx (void)
{
  char *argv[] = { "/usr/bin/python3", "-c", "import onnx", NULL };
  int status;

  return g_file_test (argv[0], G_FILE_TEST_IS_EXECUTABLE) &&
         g_spawn_sync (NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                       NULL, NULL, NULL, NULL, &status, NULL) &&
         g_spawn_check_wait_status (status, NULL);
}

static void
check_with_onnx_checker (const char *onnx)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GError) error = NULL;
  int status;
  char *argv[] = { "/usr/bin/python3", "-c",
                   "import onnx, sys\n"
                   "m = onnx.load(sys.argv[1])\n"
                   "onnx.checker.check_model(m, full_check=True)\n"
                   "print(' '.join(sorted({o.domain or 'ai.onnx' for o in m.opset_import})),\n"
                   "      ' '.join(sorted({n.domain or 'ai.onnx' for n in m.graph.node})))\n",
                   (char *) onnx, NULL };

  g_assert_true (g_spawn_sync (NULL, argv, NULL, 0, NULL, NULL, &out, &err, &status, &error));
  if (!g_spawn_check_wait_status (status, NULL))
    g_printerr ("%s", err);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  /* Only standard operators: nothing of fusebench's own domain is left. */
  g_assert_cmpstr (out, ==, "ai.onnx ai.onnx\n");
}

static void
test_onnx (Fixture *f, gconstpointer data)
{
  const char *layouts[] = { "--layout=nchw", "--layout=nhwc" };

  for (guint i = 0; i < G_N_ELEMENTS (layouts); i++)
    {
      g_autofree char *name = g_strdup_printf ("final-%u.onnx", i);
      g_autofree char *out = export_to (f, "final", "onnx", name, layouts[i]);

      check_with_fusebench (f, out);
      if (have_python_onnx ())
        check_with_onnx_checker (out);
      else
        g_test_message ("python3-onnx is not installed: onnx.checker not run");
    }
}

/* ---- Usage errors, and what is left on disk --------------------------------------------- */

static void
test_bad_stage_and_format (Fixture *f, gconstpointer data)
{
  g_autofree char *out = g_build_filename (f->dir, "x.dot", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_set_contents (out, "old", -1, &error));
  {
    g_autoptr(TestRun) run = test_run_fusebench ("export", f->model, "--stage", "fuse-everything",
                                                 "--format", "dot", "-o", out, NULL);
    g_assert_cmpint (run->status, ==, 2);
    g_assert_nonnull (strstr (run->err, "fuse-everything"));
    g_assert_nonnull (strstr (run->err, "fold-constants"));   /* says what the stages are */
  }
  {
    g_autoptr(TestRun) run = test_run_fusebench ("export", f->model, "--stage", "final",
                                                 "--format", "jpeg", "-o", out, NULL);
    g_assert_cmpint (run->status, ==, 2);
    g_assert_nonnull (strstr (run->err, "jpeg"));
  }
  {
    g_autoptr(TestRun) run = test_run_fusebench ("export", f->model, "--stage", "final",
                                                 "--format", "dot", NULL);
    g_assert_cmpint (run->status, ==, 2);
  }
  {
    g_autofree char *text = NULL;
    g_assert_true (g_file_get_contents (out, &text, NULL, &error));
    g_assert_cmpstr (text, ==, "old");
  }
}

static void
test_atomic (Fixture *f, gconstpointer data)
{
  g_autofree char *out = g_build_filename (f->dir, "graph.dot", NULL);
  g_autofree char *missing = g_build_filename (f->dir, "no-such-folder", "graph.dot", NULL);
  g_autofree char *text = NULL, *names = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_set_contents (out, "old", -1, &error));
  g_free (export_to (f, "final", "dot", "graph.dot", NULL));
  g_assert_true (g_file_get_contents (out, &text, NULL, &error));
  g_assert_true (g_str_has_prefix (text, "digraph "));
  {
    g_autoptr(TestRun) run = test_run_fusebench ("export", f->model, "--stage", "final",
                                                 "--format", "dot", "-o", missing, NULL);
    g_assert_cmpint (run->status, ==, 2);
    g_assert_nonnull (strstr (run->err, "no-such-folder"));
  }
  /* The replaced file and nothing else: no temporary left beside it. */
  names = listing (f->dir);
  g_assert_cmpstr (names, ==, "graph.dot");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/cli-export/svg", test_svg);
  ADD ("/cli-export/png", test_png);
  ADD ("/cli-export/pdf", test_pdf);
  ADD ("/cli-export/dot", test_dot);
  ADD ("/cli-export/onnx", test_onnx);
  ADD ("/cli-export/bad-stage-and-format", test_bad_stage_and_format);
  ADD ("/cli-export/atomic", test_atomic);
  ADD ("/cli-export/profile", test_profile);
  return g_test_run ();
}
