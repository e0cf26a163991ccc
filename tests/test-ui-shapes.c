/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shapes with symbolic extents as the window shows them: an input shaped like a Paddle export's
 * ("p2o.DynamicDimension.0" x 16 x 24 x ?) must read "D0×16×24×?" in the node box, on the edge
 * and in the inspector, with the whole name in the inspector only. The boxes and edge labels are
 * checked in the pixels the view draws: the ink of their shape text must end where the short text
 * ends, not where the 30 characters of the raw name would. */
#include "fb-graph-layout.h"
#include "fb-graph-view.h"
#include "fb-node-inspector.h"
#include "fb-ui.h"

#include <adwaita.h>
#include <string.h>

/* The most characters the shape line may take: "D0×16×24×?" is 10, the raw form 30. */
#define SHORT_CHARS 14
/* The average advance of the view's small text at zoom 1 (a little over its layout estimate). */
#define CHAR_PX     7.0

typedef struct {
  FbGraph     *graph;
  GtkWidget   *window;
  FbGraphView *view;
  FbNode      *first;
} Fixture;

static FbValue *
add_relu (FbGraph    *graph,
          const char *name,
          FbValue    *input)
{
  FbNode *node = fb_graph_add_node (graph, FB_OP_RELU, name, 1, 1);
  g_autofree char *value_name = g_strconcat (name, "_out", NULL);
  FbValue *out = fb_graph_add_value (graph, value_name, FB_DTYPE_FLOAT32, &input->shape);

  node->inputs[0] = input;
  fb_node_set_output (node, 0, out);
  return out;
}

/* x [p2o.DynamicDimension.0, 16, 24, ?] -> Relu "a" -> Relu "b". */
static FbGraph *
build_graph (void)
{
  g_autoptr(FbModel) model = fb_model_new (NULL);
  FbGraph *graph = fb_graph_new (model);
  int64_t dims[] = { FB_DIM_UNKNOWN, 16, 24, FB_DIM_UNKNOWN };
  FbShape shape = fb_shape_make (4, dims);
  FbValue *x, *h;

  shape.sym[0] = g_intern_static_string ("p2o.DynamicDimension.0");
  x = fb_graph_add_value (graph, "x", FB_DTYPE_FLOAT32, &shape);
  x->is_input = TRUE;
  g_ptr_array_add (graph->inputs, x);
  h = add_relu (graph, "a", x);
  h = add_relu (graph, "b", h);
  h->is_output = TRUE;
  g_ptr_array_add (graph->outputs, h);
  return graph;
}

static void
wait_until_idle (FbGraphView *view)
{
  while (fb_graph_view_is_busy (view) || gtk_widget_get_width (GTK_WIDGET (view)) == 0)
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(FbGraphLayout) layout = NULL;

  f->graph = build_graph ();
  f->first = g_ptr_array_index (f->graph->nodes, 0);
  f->window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (f->window), 800, 600);
  f->view = FB_GRAPH_VIEW (fb_graph_view_new ());
  gtk_window_set_child (GTK_WINDOW (f->window), GTK_WIDGET (f->view));
  gtk_window_present (GTK_WINDOW (f->window));
  layout = fb_graph_layout_new (f->graph, NULL, NULL);
  fb_graph_view_set_layout (f->view, layout);
  wait_until_idle (f->view);
  /* Zoom 1, where boxes and edges carry all their text. */
  fb_graph_view_zoom_at (f->view, 1.0 / fb_graph_view_get_zoom (f->view), 0, 0);
  wait_until_idle (f->view);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  gtk_window_destroy (GTK_WINDOW (f->window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  fb_graph_free (f->graph);
}

typedef struct {
  guint32 *pixels;
  int      width, height;
} Picture;

/* The view's own drawing, as its next frame would have it. */
static Picture
render (FbGraphView *view)
{
  GtkWidget *widget = GTK_WIDGET (view);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  Picture p = { NULL, gtk_widget_get_width (widget), gtk_widget_get_height (widget) };

  GTK_WIDGET_GET_CLASS (widget)->snapshot (widget, snapshot);
  node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (gtk_widget_get_native (widget)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, p.width, p.height));
  p.pixels = g_new (guint32, p.width * p.height);
  gdk_texture_download (texture, (guchar *) p.pixels, p.width * 4);
  return p;
}

static gboolean
differs (guint32 a,
         guint32 b)
{
  for (int shift = 0; shift < 32; shift += 8)
    if (ABS ((int) ((a >> shift) & 0xff) - (int) ((b >> shift) & 0xff)) > 24)
      return TRUE;
  return FALSE;
}

/* The rightmost column in [x0, x1) of rows [y0, y1) (widget pixels) whose colour is not
 * background; x0 - 1 when there is none. */
static int
ink_right (const Picture *p,
           int            x0,
           int            x1,
           int            y0,
           int            y1,
           guint32        background)
{
  int right = x0 - 1;

  x0 = MAX (x0, 0);
  x1 = MIN (x1, p->width);
  y0 = MAX (y0, 0);
  y1 = MIN (y1, p->height);
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      if (differs (p->pixels[y * p->width + x], background))
        right = MAX (right, x);
  return right;
}

static void
to_widget (FbGraphView *view,
           double       sx,
           double       sy,
           int         *x,
           int         *y)
{
  double wx, wy;

  fb_graph_view_scene_to_widget (view, sx, sy, &wx, &wy);
  *x = (int) wx;
  *y = (int) wy;
}

static void
test_box_and_edge (Fixture       *f,
                   gconstpointer  data)
{
  FbGraphScene *scene = fb_graph_view_get_scene (f->view);
  int index = fb_graph_scene_find_node (scene, f->first);
  const FbSceneItem *item;
  const FbSceneEdge *edge = NULL;
  Picture picture;
  int left, top, bottom, right, x, y, ink;
  guint32 fill, background;

  g_assert_cmpfloat (fb_graph_view_get_zoom (f->view), ==, 1.0);
  g_assert_cmpint (index, >=, 0);
  item = fb_graph_scene_item (scene, index);
  /* The box is as wide as its short text needs, not as the raw name would make it. */
  g_assert_cmpfloat (item->width, <, SHORT_CHARS * CHAR_PX + 30);

  picture = render (f->view);
  /* The shape line, the box's last: its ink from the text margin on. */
  to_widget (f->view, item->x + 10, item->y + item->height - 18, &left, &top);
  to_widget (f->view, item->x + item->width - 3, item->y + item->height - 5, &right, &bottom);
  g_assert_true (left >= 0 && right < picture.width && top >= 0 && bottom < picture.height);
  to_widget (f->view, item->x + 5, item->y + item->height - 12, &x, &y);
  fill = picture.pixels[y * picture.width + x];
  ink = ink_right (&picture, left, right, top, bottom, fill);
  g_assert_cmpint (ink, >, left + 20);                     /* something is written */
  g_assert_cmpint (ink - left, <, SHORT_CHARS * CHAR_PX);  /* and it is short */

  /* The edge from a to b: its label right of the line, on the background. */
  for (guint i = 0; i < fb_graph_scene_n_edges (scene); i++)
    if (fb_graph_scene_edge (scene, i)->from == index)
      edge = fb_graph_scene_edge (scene, i);
  g_assert_nonnull (edge);
  to_widget (f->view, edge->label_x + 4, edge->label_y - 6, &left, &top);
  to_widget (f->view, edge->label_x + 4 + 150, edge->label_y + 8, &right, &bottom);
  g_assert_true (left >= 0 && right < picture.width && top >= 0 && bottom < picture.height);
  background = picture.pixels[top * picture.width + picture.width - 2];
  ink = ink_right (&picture, left, right, top, bottom, background);
  g_assert_cmpint (ink, >, left + 20);
  g_assert_cmpint (ink - left, <, SHORT_CHARS * CHAR_PX);
  g_free (picture.pixels);
}

static gboolean
has_label (GtkWidget  *widget,
           const char *text)
{
  if (GTK_IS_LABEL (widget) && strstr (gtk_label_get_label (GTK_LABEL (widget)), text) != NULL)
    return TRUE;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL; child = gtk_widget_get_next_sibling (child))
    if (has_label (child, text))
      return TRUE;
  return FALSE;
}

/* The inspector writes the short form and, under it, what the short name stands for. */
static void
test_inspector (void)
{
  g_autoptr(FbGraph) graph = build_graph ();
  GtkWidget *window = gtk_window_new ();
  GtkWidget *inspector = fb_node_inspector_new ();

  gtk_window_set_child (GTK_WINDOW (window), inspector);
  gtk_window_present (GTK_WINDOW (window));
  fb_node_inspector_show_node (FB_NODE_INSPECTOR (inspector), graph, g_ptr_array_index (graph->nodes, 0), NULL);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_true (has_label (inspector, "float32 [D0×16×24×?]"));
  g_assert_true (has_label (inspector, "D0 = p2o.DynamicDimension.0"));
  g_assert_false (has_label (inspector, "p2o.DynamicDimension.0x"));
  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
}

int
main (int    argc,
      char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  fb_ui_init ();

  g_test_add ("/ui/shapes/box-and-edge", Fixture, NULL, fixture_set_up, test_box_and_edge, fixture_tear_down);
  g_test_add_func ("/ui/shapes/inspector", test_inspector);
  return g_test_run ();
}
