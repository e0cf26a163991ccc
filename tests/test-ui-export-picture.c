/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Graph pictures exported from a real window with a recorded profile on screen: the picture
 * carries the profile's colours as the view paints them, is cropped to what is drawn rather
 * than the view's canvas, and no two edge labels run into one text. */
#include "fb-application.h"
#include "fb-graph-labels.h"
#include "fb-graph-picture.h"
#include "fb-window.h"
#include "fb-test-window.h"
#include "fb-window-export.h"

#include <cairo.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define MARGIN 16.0   /* fb-graph-picture.c's, around what is drawn */
#define SCALE  2.0    /* PNG pixels per scene pixel for a picture this small */

static FbApplication *app;
static FbWindow *window;
static char *dir;

static void
settle (void)
{
  test_window_settle (window);
}

static FbGraphView *
active_view (void)
{
  return fb_compare_view_get_active_view (fb_window_get_compare_view (window));
}

static void
select_stage (const char *name)
{
  int index = fb_run_find_stage (fb_window_get_run (window), name);

  g_assert_cmpint (index, >=, 0);
  fb_stage_list_select (fb_window_get_stage_list (window), index);
  settle ();
}

/* Exports the graph on screen to name in dir and returns its path once it is written. */
static char *
export_graph (const char *name)
{
  char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);

  g_assert_true (fb_window_can_export (window, FB_EXPORT_GRAPH));
  fb_window_export_to (window, FB_EXPORT_GRAPH, file, FALSE);
  settle ();
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  return path;
}

/* Pixels of the profile's heat ramp (pale yellow, orange, red: red well above blue) that no
 * box kind's pale fill reaches. */
static guint
count_heat (cairo_surface_t *image)
{
  int w = cairo_image_surface_get_width (image), h = cairo_image_surface_get_height (image);
  int stride = cairo_image_surface_get_stride (image);
  const guint8 *data = cairo_image_surface_get_data (image);
  guint n = 0;

  cairo_surface_flush (image);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        guint32 px = *(const guint32 *) (data + y * stride + 4 * x);
        int r = (px >> 16) & 0xff, b = px & 0xff;

        n += r > 200 && r - b > 110;
      }
  return n;
}

/* The union of the scene's boxes and frames. */
static void
items_extent (FbGraphScene *scene, double *w, double *h)
{
  double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;

  for (guint i = 0; i < fb_graph_scene_n_items (scene); i++)
    {
      const FbSceneItem *item = fb_graph_scene_item (scene, i);
      x0 = MIN (x0, item->x);
      y0 = MIN (y0, item->y);
      x1 = MAX (x1, item->x + item->width);
      y1 = MAX (y1, item->y + item->height);
    }
  *w = x1 - x0;
  *h = y1 - y0;
}

static void
test_profile_colours (void)
{
  g_autofree char *fixture = g_test_build_filename (G_TEST_DIST, "fixtures",
                                                    "sample-cnn.profile.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (fixture);
  g_autofree char *plain = NULL, *profiled = NULL;
  cairo_surface_t *before, *after;
  guint heat_before, heat_after, painted;

  plain = export_graph ("plain.png");
  before = cairo_image_surface_create_from_png (plain);
  g_assert_cmpint (cairo_surface_status (before), ==, CAIRO_STATUS_SUCCESS);

  fb_window_open_profile (window, file);
  while (fb_window_get_profile (window) == NULL)
    g_main_context_iteration (NULL, TRUE);
  settle ();
  g_assert_nonnull (fb_graph_view_get_profile (active_view ()));

  profiled = export_graph ("profiled.png");
  after = cairo_image_surface_create_from_png (profiled);
  g_assert_cmpint (cairo_surface_status (after), ==, CAIRO_STATUS_SUCCESS);

  /* The window paints the profile on its boxes; the picture carries those colours: a hot box is
   * thousands of pixels of orange to red, where the unprofiled picture has at most thin borders. */
  painted = fb_graph_view_get_n_painted (active_view (), NULL);
  g_assert_cmpuint (painted, >, 0);
  heat_before = count_heat (before);
  heat_after = count_heat (after);
  g_test_message ("heat pixels: %u without the profile, %u with it (%u boxes painted)",
                  heat_before, heat_after, painted);
  g_assert_cmpuint (heat_after, >, heat_before + 1000);

  /* The SVG too: the hottest box's tint is the top of the heat ramp, red at 90 %. */
  {
    g_autofree char *svg = export_graph ("profiled.svg");
    g_autofree char *text = NULL;

    g_assert_true (g_file_get_contents (svg, &text, NULL, NULL));
    g_assert_nonnull (strstr (text, "fill:rgb(85%,11%,14%);fill-opacity:0.9;"));
  }
  cairo_surface_destroy (before);
  cairo_surface_destroy (after);
}

static void
test_cropped (void)
{
  FbGraphScene *scene = fb_graph_view_get_scene (active_view ());
  g_autofree char *path = export_graph ("cropped.png");
  cairo_surface_t *image = cairo_image_surface_create_from_png (path);
  double iw, ih, sw, sh, pw, ph;

  g_assert_cmpint (cairo_surface_status (image), ==, CAIRO_STATUS_SUCCESS);
  items_extent (scene, &iw, &ih);
  fb_graph_scene_get_bounds (scene, &sw, &sh);
  pw = cairo_image_surface_get_width (image) / SCALE;
  ph = cairo_image_surface_get_height (image) / SCALE;
  g_test_message ("boxes %.0f x %.0f, scene canvas %.0f x %.0f, picture %.0f x %.0f",
                  iw, ih, sw, sh, pw, ph);
  /* Everything drawn is in it... */
  g_assert_cmpfloat (pw, >=, iw + 2 * MARGIN - 1);
  g_assert_cmpfloat (ph, >=, ih + 2 * MARGIN - 1);
  /* ...and little else: the margin, and edge labels that stick out past the outermost boxes. */
  g_assert_cmpfloat (pw, <=, iw + 2 * MARGIN + FB_GRAPH_LABEL_MAX_WIDTH + 10);
  g_assert_cmpfloat (ph, <=, ih + 2 * MARGIN + 40);
  cairo_surface_destroy (image);
}

typedef struct { double x, y, w, h; } Rect;

static gboolean
rects_overlap (const Rect *a, const Rect *b)
{
  return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

/* The text rectangle of every label where Graphviz alone puts it (4 px right of its point, as
 * the drawing did before labels were placed), in the font pictures use. */
static GArray *
unplaced_rects (FbGraphScene *scene, FbGraphPaint *paint)
{
  GArray *rects = g_array_new (FALSE, FALSE, sizeof (Rect));

  for (guint i = 0; i < fb_graph_scene_n_edges (scene); i++)
    {
      const FbSceneEdge *edge = fb_graph_scene_edge (scene, i);
      g_autofree char *text = fb_graph_labels_text (edge);
      PangoRectangle extents;
      Rect r;

      if (text == NULL)
        continue;
      pango_layout_set_font_description (paint->text, paint->mono_font);
      pango_layout_set_width (paint->text, -1);
      pango_layout_set_text (paint->text, text, -1);
      pango_layout_get_pixel_extents (paint->text, NULL, &extents);
      r = (Rect) { edge->label_x + 4, edge->label_y - 6, MIN (extents.width, FB_GRAPH_LABEL_MAX_WIDTH),
                   extents.height };
      g_array_append_val (rects, r);
    }
  return rects;
}

static guint
count_overlaps (GArray *rects)
{
  guint n = 0;

  for (guint i = 0; i < rects->len; i++)
    for (guint j = i + 1; j < rects->len; j++)
      n += rects_overlap (&g_array_index (rects, Rect, i), &g_array_index (rects, Rect, j));
  return n;
}

/* Places scene's labels in a picture's fonts and checks them: each shown label as wide as its
 * text, no two overlapping, most of them shown. Returns how many pairs overlapped unplaced. */
static guint
check_labels (FbGraphScene *scene)
{
  PangoFontMap *map = pango_cairo_font_map_new ();
  PangoContext *context = pango_font_map_create_context (map);
  g_autoptr(PangoFontDescription) base = pango_font_description_from_string ("Sans 10");
  g_autoptr(FbGraphLabels) labels = NULL;
  g_autoptr(GArray) rects = g_array_new (FALSE, FALSE, sizeof (Rect));
  g_autoptr(GArray) unplaced = NULL;
  FbGraphPaint paint = { 0 };
  guint with_text = 0, before;

  pango_context_set_font_description (context, base);
  fb_graph_paint_init_style (&paint, context, FALSE);
  paint.text = pango_layout_new (context);
  labels = fb_graph_labels_place (scene, &paint);
  for (guint i = 0; i < fb_graph_scene_n_edges (scene); i++)
    {
      const FbSceneEdge *edge = fb_graph_scene_edge (scene, i);
      g_autofree char *text = fb_graph_labels_text (edge);
      Rect r;

      if (text == NULL)
        continue;
      with_text++;
      if (fb_graph_labels_get (labels, i, &r.x, &r.y, &r.w, &r.h))
        {
          PangoRectangle extents;

          pango_layout_set_font_description (paint.text, paint.mono_font);
          pango_layout_set_width (paint.text, -1);
          pango_layout_set_text (paint.text, text, -1);
          pango_layout_get_pixel_extents (paint.text, NULL, &extents);
          g_assert_cmpfloat (r.w, ==, MIN (extents.width, FB_GRAPH_LABEL_MAX_WIDTH));
          g_array_append_val (rects, r);
        }
    }
  unplaced = unplaced_rects (scene, &paint);
  before = count_overlaps (unplaced);
  g_test_message ("%u labelled edges, %u shown; unplaced, %u pairs of them overlap",
                  with_text, rects->len, before);
  g_assert_cmpuint (with_text, >, 0);
  g_assert_cmpuint (rects->len, >, with_text / 2);
  g_assert_cmpuint (count_overlaps (rects), ==, 0);
  g_object_unref (paint.text);
  fb_graph_paint_clear_fonts (&paint);
  g_object_unref (context);
  g_object_unref (map);
  return before;
}

static void
test_labels (void)
{
  check_labels (fb_graph_view_get_scene (active_view ()));
}

static FbValue *
add_op (FbGraph *graph, FbOpKind op, const char *name, FbValue *input, FbValue *second)
{
  int64_t dims[] = { 1, 256, 56, 56 };
  FbShape shape = fb_shape_make (4, dims);
  FbNode *node = fb_graph_add_node (graph, op, name, second != NULL ? 2 : 1, 1);
  g_autofree char *value_name = g_strconcat (name, ":0", NULL);
  FbValue *out = fb_graph_add_value (graph, value_name, FB_DTYPE_FLOAT32, &shape);

  node->inputs[0] = input;
  if (second != NULL)
    node->inputs[1] = second;
  fb_node_set_output (node, 0, out);
  return out;
}

/* The case: one value read by four nodes side by side, the edges leaving its box
 * together and their label points a few pixels apart, each labelled 1x256x56x56. */
static void
test_labels_fan_out (void)
{
  g_autoptr(FbModel) model = fb_model_new (NULL);
  g_autoptr(FbGraph) graph = fb_graph_new (model);
  g_autoptr(FbGraphLayout) layout = NULL;
  g_autoptr(GHashTable) expanded = NULL;
  g_autoptr(FbGraphScene) scene = NULL;
  g_autoptr(GError) error = NULL;
  int64_t dims[] = { 1, 256, 56, 56 };
  FbShape shape = fb_shape_make (4, dims);
  FbValue *x = fb_graph_add_value (graph, "x", FB_DTYPE_FLOAT32, &shape);
  FbValue *r, *a, *b, *c, *d, *sum;

  x->is_input = TRUE;
  g_ptr_array_add (graph->inputs, x);
  r = add_op (graph, FB_OP_RELU, "relu", x, NULL);
  a = add_op (graph, FB_OP_SIGMOID, "a", r, NULL);
  b = add_op (graph, FB_OP_TANH, "b", r, NULL);
  c = add_op (graph, FB_OP_ABS, "c", r, NULL);
  d = add_op (graph, FB_OP_NEG, "d", r, NULL);
  sum = add_op (graph, FB_OP_ADD, "ab", a, b);
  sum = add_op (graph, FB_OP_ADD, "abc", sum, c);
  sum = add_op (graph, FB_OP_ADD, "abcd", sum, d);
  sum->is_output = TRUE;
  g_ptr_array_add (graph->outputs, sum);

  layout = fb_graph_layout_new (graph, NULL, NULL);
  expanded = fb_graph_layout_default_expansion (layout, G_MAXUINT);
  scene = fb_graph_layout_compute (layout, expanded, NULL, &error);
  g_assert_no_error (error);
  /* Unplaced, the labels run into one text, as the issue shows; placed, none overlap. */
  g_assert_cmpuint (check_labels (scene), >, 0);
  /* And a picture of the scene draws with that placement. */
  {
    g_autoptr(GBytes) png = fb_graph_picture_render (scene, FB_GRAPH_PICTURE_PNG, NULL, &error);
    g_assert_no_error (error);
    g_assert_nonnull (png);
  }
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  dir = g_dir_make_tmp ("fb-ui-export-picture-XXXXXX", &error);
  g_assert_no_error (error);
  app = fb_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  window = fb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1200, 800);
  gtk_window_present (GTK_WINDOW (window));
  fb_window_open_sample (window);
  settle ();
  /* A stage after fusion: its pane keeps the places (and the canvas) of the stage before, so
   * the canvas is bigger than what is left on it. */
  select_stage ("fuse-epilogue");

  /* Before the profile opens: a profiled picture adds a band for the legend under the graph. */
  g_test_add_func ("/ui/export-picture/cropped", test_cropped);
  g_test_add_func ("/ui/export-picture/labels", test_labels);
  g_test_add_func ("/ui/export-picture/labels-fan-out", test_labels_fan_out);
  g_test_add_func ("/ui/export-picture/profile-colours", test_profile_colours);
  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_object_unref (app);
  {
    g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
    const char *name;
    while (d != NULL && (name = g_dir_read_name (d)) != NULL)
      {
        g_autofree char *path = g_build_filename (dir, name, NULL);
        g_unlink (path);
      }
  }
  g_rmdir (dir);
  g_free (dir);
  return status;
}
