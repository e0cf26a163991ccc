/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The graph view's input: click to select, double-click to open or fold a group, right-click for
 * a menu, drag and scroll to pan, Ctrl+scroll and pinch to zoom, the minimap, and the keys. */
#include "fb-graph-view-private.h"
#include "fb-graph-style-private.h"

#include <math.h>

#define ZOOM_STEP   1.25    /* Ctrl+scroll: one wheel click */
#define SCROLL_STEP 48.0   /* pixels per wheel click */

static gboolean
in_minimap (FbGraphView *self,
            double       wx,
            double       wy)
{
  double x, y, w, h;

  return _fb_graph_view_minimap_rect (self, &x, &y, &w, &h)
         && wx >= x && wx < x + w && wy >= y && wy < y + h;
}

static void
center_from_minimap (FbGraphView *self,
                     double       wx,
                     double       wy)
{
  double x, y, w, h;

  if (!_fb_graph_view_minimap_rect (self, &x, &y, &w, &h))
    return;
  fb_graph_view_set_viewport (self,
                              (wx - x) / self->minimap_scale - _fb_graph_view_width (self) / self->zoom / 2,
                              (wy - y) / self->minimap_scale - _fb_graph_view_height (self) / self->zoom / 2,
                              self->zoom);
}

static int
item_at_widget (FbGraphView *self,
                double       wx,
                double       wy)
{
  double sx, sy;

  if (self->scene == NULL)
    return -1;
  fb_graph_view_widget_to_scene (self, wx, wy, &sx, &sy);
  return fb_graph_scene_item_at (self->scene, sx, sy);
}

static void
on_click_pressed (GtkGestureClick *gesture,
                  int              n_press,
                  double           x,
                  double           y,
                  FbGraphView     *self)
{
  int index;
  const FbSceneItem *item;

  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (n_press != 2 || in_minimap (self, x, y) || (index = item_at_widget (self, x, y)) < 0)
    return;
  item = fb_graph_scene_item (self->scene, index);
  if (item->kind == FB_SCENE_ITEM_GROUP)
    fb_graph_view_set_group_expanded (self, fb_graph_group_get_path (item->group), TRUE);
  else if (item->kind == FB_SCENE_ITEM_FRAME)
    {
      double sx, sy;

      /* Only the title bar folds a frame back: double-clicking inside it is too easy. */
      fb_graph_view_widget_to_scene (self, x, y, &sx, &sy);
      if (sy < item->y + FB_GRAPH_FRAME_HEADER)
        fb_graph_view_set_group_expanded (self, fb_graph_group_get_path (item->group), FALSE);
    }
}

static void
on_click_released (GtkGestureClick *gesture,
                   int              n_press,
                   double           x,
                   double           y,
                   FbGraphView     *self)
{
  if (n_press != 1)
    return;
  if (in_minimap (self, x, y))
    center_from_minimap (self, x, y);
  else
    _fb_graph_view_select_at (self, x, y);
}

static void
on_context_pressed (GtkGestureClick *gesture,
                    int              n_press,
                    double           x,
                    double           y,
                    FbGraphView     *self)
{
  int index = item_at_widget (self, x, y);
  const FbSceneItem *item;

  if (index < 0)
    return;
  _fb_graph_view_select_item (self, index, FALSE);
  item = fb_graph_scene_item (self->scene, index);
  g_menu_remove_all (self->menu);
  _fb_graph_view_emit_populate_context_menu (self, item->node);
  if (g_menu_model_get_n_items (G_MENU_MODEL (self->menu)) == 0)
    return;
  gtk_popover_set_pointing_to (GTK_POPOVER (self->popover), &(GdkRectangle) { x, y, 1, 1 });
  gtk_popover_popup (GTK_POPOVER (self->popover));
}

static void
on_drag_begin (GtkGestureDrag *gesture,
               double          x,
               double          y,
               FbGraphView    *self)
{
  self->drag_minimap = in_minimap (self, x, y);
  self->drag_x = self->origin_x;
  self->drag_y = self->origin_y;
}

static void
on_drag_update (GtkGestureDrag *gesture,
                double          dx,
                double          dy,
                FbGraphView    *self)
{
  double x, y;

  if (self->drag_minimap)
    {
      gtk_gesture_drag_get_start_point (gesture, &x, &y);
      center_from_minimap (self, x + dx, y + dy);
      return;
    }
  fb_graph_view_set_viewport (self, self->drag_x - dx / self->zoom, self->drag_y - dy / self->zoom,
                              self->zoom);
}

static gboolean
on_scroll (GtkEventControllerScroll *controller,
           double                    dx,
           double                    dy,
           FbGraphView              *self)
{
  GdkModifierType state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  double step = gtk_event_controller_scroll_get_unit (controller) == GDK_SCROLL_UNIT_WHEEL ? SCROLL_STEP : 1;

  if (state & GDK_CONTROL_MASK)
    {
      fb_graph_view_zoom_at (self, pow (ZOOM_STEP, -dy * (step == 1 ? 0.02 : 1)),
                             self->pointer_x, self->pointer_y);
      return TRUE;
    }
  if (state & GDK_SHIFT_MASK && dx == 0)
    {
      dx = dy;
      dy = 0;
    }
  fb_graph_view_set_viewport (self, self->origin_x + dx * step / self->zoom,
                              self->origin_y + dy * step / self->zoom, self->zoom);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *controller,
           double                    x,
           double                    y,
           FbGraphView              *self)
{
  self->pointer_x = x;
  self->pointer_y = y;
}

static void
on_zoom_begin (GtkGesture       *gesture,
               GdkEventSequence *sequence,
               FbGraphView      *self)
{
  self->zoom_begin = self->zoom;
}

static void
on_zoom_scale_changed (GtkGestureZoom *gesture,
                       double          scale,
                       FbGraphView    *self)
{
  double cx, cy;

  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (gesture), &cx, &cy))
    {
      cx = _fb_graph_view_width (self) / 2;
      cy = _fb_graph_view_height (self) / 2;
    }
  fb_graph_view_zoom_at (self, self->zoom_begin * scale / self->zoom, cx, cy);
}

static gboolean
on_key_pressed (GtkEventControllerKey *controller,
                guint                  keyval,
                guint                  keycode,
                GdkModifierType        state,
                FbGraphView           *self)
{
  gboolean ctrl = (state & GDK_CONTROL_MASK) != 0;

  switch (keyval)
    {
    case GDK_KEY_Up:
    case GDK_KEY_KP_Up:
      return fb_graph_view_walk (self, FB_GRAPH_WALK_UP) || TRUE;
    case GDK_KEY_Down:
    case GDK_KEY_KP_Down:
      return fb_graph_view_walk (self, FB_GRAPH_WALK_DOWN) || TRUE;
    case GDK_KEY_Left:
    case GDK_KEY_KP_Left:
      return fb_graph_view_walk (self, FB_GRAPH_WALK_LEFT) || TRUE;
    case GDK_KEY_Right:
    case GDK_KEY_KP_Right:
      return fb_graph_view_walk (self, FB_GRAPH_WALK_RIGHT) || TRUE;
    case GDK_KEY_plus:
    case GDK_KEY_equal:
    case GDK_KEY_KP_Add:
      fb_graph_view_zoom_in (self);
      return TRUE;
    case GDK_KEY_minus:
    case GDK_KEY_KP_Subtract:
      fb_graph_view_zoom_out (self);
      return TRUE;
    case GDK_KEY_0:
    case GDK_KEY_KP_0:
      if (!ctrl)
        return FALSE;
      fb_graph_view_zoom_to_fit (self);
      return TRUE;
    case GDK_KEY_Return:
    case GDK_KEY_KP_Enter:
    case GDK_KEY_space:
      {
        FbGraphGroup *group = fb_graph_view_get_selected_group (self);

        if (group == NULL)
          return FALSE;
        fb_graph_view_set_group_expanded (self, fb_graph_group_get_path (group),
                                          !fb_graph_view_get_group_expanded (self, fb_graph_group_get_path (group)));
        return TRUE;
      }
    case GDK_KEY_Escape:
      if (!self->has_selection)
        return FALSE;
      fb_graph_view_clear_selection (self);
      return TRUE;
    default:
      return FALSE;
    }
}

void
_fb_graph_view_init_input (FbGraphView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  GtkGesture *gesture;
  GtkEventController *controller;

  gesture = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (gesture), GDK_BUTTON_PRIMARY);
  g_signal_connect (gesture, "pressed", G_CALLBACK (on_click_pressed), self);
  g_signal_connect (gesture, "released", G_CALLBACK (on_click_released), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (gesture));

  gesture = gtk_gesture_click_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (gesture), GDK_BUTTON_SECONDARY);
  g_signal_connect (gesture, "pressed", G_CALLBACK (on_context_pressed), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (gesture));

  gesture = gtk_gesture_drag_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (gesture), GDK_BUTTON_PRIMARY);
  g_signal_connect (gesture, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (gesture, "drag-update", G_CALLBACK (on_drag_update), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (gesture));

  gesture = gtk_gesture_zoom_new ();
  g_signal_connect (gesture, "begin", G_CALLBACK (on_zoom_begin), self);
  g_signal_connect (gesture, "scale-changed", G_CALLBACK (on_zoom_scale_changed), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (gesture));

  controller = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (controller, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (widget, controller);

  controller = gtk_event_controller_motion_new ();
  g_signal_connect (controller, "motion", G_CALLBACK (on_motion), self);
  gtk_widget_add_controller (widget, controller);

  controller = gtk_event_controller_key_new ();
  g_signal_connect (controller, "key-pressed", G_CALLBACK (on_key_pressed), self);
  gtk_widget_add_controller (widget, controller);
}
