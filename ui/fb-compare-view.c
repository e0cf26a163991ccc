/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-compare-view.h"
#include "fb-compare-focus-private.h"

/* How many members the groups opened for a stage's changes may hold together: a few parts of a
 * big flat graph; opening more would take seconds of layout before anything shows. */
#define CHANGE_GROUPS_BUDGET 1200

struct _FbCompareView {
  GtkWidget    parent_instance;

  GtkWidget   *before_box;
  GtkLabel    *before_title;
  GtkLabel    *before_info;
  GtkLabel    *after_title;
  GtkLabel    *after_info;
  FbGraphView *before_view;
  FbGraphView *after_view;

  FbRun       *run;
  GPtrArray   *layouts;        /* FbGraphLayout* per stage of run, NULL until used */
  int          stage;
  FbGraphView *active;
  gboolean     syncing;        /* while one view is being brought in step with the other */
  FbGraphConstants constants;  /* how every layout draws constants */
  gboolean     focus_pending;  /* scroll to the stage's changes (its top, when none) once both
                                  pictures of its layouts are there */

  /* From the shown stage's changes. */
  GHashTable  *change_of;      /* node id -> FbChange* (of the stage on the right) */
  GHashTable  *first_member;   /* fused node id -> id of its first member */
};

G_DEFINE_FINAL_TYPE (FbCompareView, fb_compare_view, GTK_TYPE_WIDGET)

enum {
  SELECTION_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

GtkWidget *
fb_compare_view_new (void)
{
  return g_object_new (FB_TYPE_COMPARE_VIEW, NULL);
}

static void
layout_unref0 (gpointer data)
{
  if (data != NULL)
    fb_graph_layout_unref (data);
}

FbGraphLayout *
fb_compare_view_get_layout (FbCompareView *self,
                            guint          index)
{
  FbGraphLayout *layout;
  FbStage *stage;

  g_return_val_if_fail (FB_IS_COMPARE_VIEW (self), NULL);
  g_return_val_if_fail (self->run != NULL, NULL);
  g_return_val_if_fail (index < fb_run_n_stages (self->run), NULL);

  if ((layout = g_ptr_array_index (self->layouts, index)) != NULL)
    return layout;
  stage = fb_run_get_stage (self->run, index);
  layout = fb_graph_layout_new_full (stage->graph,
                                     index > 0 ? fb_compare_view_get_layout (self, index - 1) : NULL,
                                     index > 0 ? stage->changes : NULL, self->constants);
  /* The stage, not the run: a layout outlives the run it was made for when the next run keeps
   * its stage. */
  fb_graph_layout_hold (layout, fb_stage_ref (stage), (GDestroyNotify) fb_stage_unref);
  g_ptr_array_index (self->layouts, index) = layout;
  return layout;
}

static GHashTable *
make_marks (FbStage  *stage,
            gboolean  before)
{
  GHashTable *marks = g_hash_table_new (NULL, NULL);

  for (guint i = 0; stage->changes != NULL && i < stage->changes->len; i++)
    {
      const FbChange *change = &g_array_index (stage->changes, FbChange, i);
      FbGraphMark mark = FB_GRAPH_MARK_NONE;

      switch (change->kind)
        {
        case FB_CHANGE_ADDED:
          mark = before ? FB_GRAPH_MARK_NONE : FB_GRAPH_MARK_ADDED;
          break;
        case FB_CHANGE_REMOVED:
          mark = before ? FB_GRAPH_MARK_REMOVED : FB_GRAPH_MARK_NONE;
          break;
        case FB_CHANGE_FUSED:
          mark = before ? FB_GRAPH_MARK_FUSED : FB_GRAPH_MARK_NONE;
          break;
        case FB_CHANGE_CHANGED:
          mark = FB_GRAPH_MARK_CHANGED;
          break;
        default:
          break;
        }
      if (mark != FB_GRAPH_MARK_NONE)
        g_hash_table_insert (marks, GUINT_TO_POINTER (change->node_id), GINT_TO_POINTER (mark));
    }
  return marks;
}

static void
update_headers (FbCompareView *self,
                FbStage       *before,
                FbStage       *after)
{
  guint counts[4] = { 0 };
  g_autofree char *after_title = NULL;
  g_autofree char *before_text = NULL;
  GString *info = g_string_new (NULL);

  for (guint i = 0; after->changes != NULL && i < after->changes->len; i++)
    {
      const FbChange *change = &g_array_index (after->changes, FbChange, i);

      if ((guint) change->kind < G_N_ELEMENTS (counts))
        counts[change->kind]++;
    }
  if (before == NULL)
    after_title = g_strdup_printf ("%s · as loaded", after->name);
  else
    after_title = g_strdup_printf ("After %s", after->name);
  gtk_label_set_label (self->after_title, after_title);
  g_string_append_printf (info, "%u nodes", after->nodes_after);
  if (!after->enabled)
    g_string_append (info, " · pass switched off");
  if (counts[FB_CHANGE_ADDED] > 0)
    g_string_append_printf (info, " · <span foreground='#2ec27e'>■</span> %u added", counts[FB_CHANGE_ADDED]);
  if (counts[FB_CHANGE_REMOVED] > 0)
    g_string_append_printf (info, " · <span foreground='#e01b24'>■</span> %u removed", counts[FB_CHANGE_REMOVED]);
  if (counts[FB_CHANGE_FUSED] > 0)
    g_string_append_printf (info, " · <span foreground='#9141ac'>■</span> %u fused", counts[FB_CHANGE_FUSED]);
  if (counts[FB_CHANGE_CHANGED] > 0)
    g_string_append_printf (info, " · <span foreground='#e66100'>■</span> %u changed", counts[FB_CHANGE_CHANGED]);
  gtk_label_set_markup (self->after_info, info->str);
  g_string_free (info, TRUE);

  if (before != NULL)
    {
      g_autofree char *before_title = g_strdup_printf ("Before %s", after->name);

      before_text = g_strdup_printf ("%s · %u nodes", before->name, before->nodes_after);
      gtk_label_set_label (self->before_title, before_title);
      gtk_label_set_label (self->before_info, before_text);
    }
}

static gboolean
has_picture (FbGraphView *view)
{
  return fb_graph_view_get_scene (view) != NULL && !fb_graph_view_is_busy (view);
}

/* Both sides open on what the pass did, or on the graph's top when it did nothing, once both
 * pictures of the stage's layouts are there with the groups holding the changes open: the
 * layouts are seeded one by the other, so the same place on both sides holds the same part of
 * the graph. A pane with no size yet shows it once it has one. */
static gboolean
try_focus (FbCompareView *self)
{
  gboolean two = gtk_widget_get_visible (self->before_box);
  g_autoptr(GArray) rects = NULL;
  FbStage *stage;
  double x, y, zoom;

  if (!self->focus_pending || self->run == NULL || self->stage < 0)
    return FALSE;
  if (!has_picture (self->after_view) || (two && !has_picture (self->before_view)))
    return FALSE;
  self->focus_pending = FALSE;
  stage = fb_run_get_stage (self->run, self->stage);
  rects = g_array_new (FALSE, FALSE, sizeof (graphene_rect_t));
  _fb_compare_add_change_rects (stage, self->after_view, FALSE, rects);
  if (two)
    _fb_compare_add_change_rects (stage, self->before_view, TRUE, rects);
  /* The right side moves; the left one follows it through on_viewport_changed, and now, in case
     the right one was there already. */
  if (rects->len > 0)
    fb_graph_view_show_rects (self->after_view, (const graphene_rect_t *) rects->data, rects->len);
  else
    fb_graph_view_show_top (self->after_view);
  if (two)
    {
      self->syncing = TRUE;
      fb_graph_view_get_viewport (self->after_view, &x, &y, &zoom);
      fb_graph_view_set_viewport (self->before_view, x, y, zoom);
      self->syncing = FALSE;
    }
  return TRUE;
}

static void
add_paths (GHashTable *paths,
           GHashTable *more)
{
  GHashTableIter iter;
  gpointer path;

  g_hash_table_iter_init (&iter, more);
  while (g_hash_table_iter_next (&iter, &path, NULL))
    if (!g_hash_table_contains (paths, path))
      g_hash_table_add (paths, g_strdup (path));
}

/* Both sides open the same groups (the parts of a big graph hold the same nodes on both sides),
 * and every group that holds what the stage changed. */
static void
open_groups (FbCompareView *self,
             FbStage       *stage,
             gboolean       two)
{
  g_autoptr(GHashTable) paths = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint budget = CHANGE_GROUPS_BUDGET;

  _fb_compare_add_change_groups (stage, fb_graph_view_get_layout (self->after_view), FALSE, paths, &budget);
  if (two)
    {
      _fb_compare_add_change_groups (stage, fb_graph_view_get_layout (self->before_view), TRUE, paths, &budget);
      add_paths (paths, fb_graph_view_get_expanded (self->after_view));
      add_paths (paths, fb_graph_view_get_expanded (self->before_view));
      fb_graph_view_expand_groups (self->before_view, paths);
    }
  fb_graph_view_expand_groups (self->after_view, paths);
}

static void
apply_stage (FbCompareView *self)
{
  FbStage *after, *before = NULL;
  g_autoptr(GHashTable) before_marks = NULL;
  g_autoptr(GHashTable) after_marks = NULL;

  g_hash_table_remove_all (self->change_of);
  g_hash_table_remove_all (self->first_member);
  if (self->run == NULL || self->stage < 0)
    {
      fb_graph_view_set_layout (self->before_view, NULL);
      fb_graph_view_set_layout (self->after_view, NULL);
      gtk_label_set_label (self->after_title, "");
      gtk_label_set_label (self->after_info, "");
      return;
    }
  after = fb_run_get_stage (self->run, self->stage);
  if (self->stage > 0)
    before = fb_run_get_stage (self->run, self->stage - 1);
  for (guint i = 0; after->changes != NULL && i < after->changes->len; i++)
    {
      FbChange *change = &g_array_index (after->changes, FbChange, i);

      g_hash_table_insert (self->change_of, GUINT_TO_POINTER (change->node_id), change);
      if (change->kind == FB_CHANGE_FUSED
          && !g_hash_table_contains (self->first_member, GUINT_TO_POINTER (change->fused_into)))
        g_hash_table_insert (self->first_member, GUINT_TO_POINTER (change->fused_into),
                             GUINT_TO_POINTER (change->node_id));
    }

  self->syncing = TRUE;
  after_marks = make_marks (after, FALSE);
  fb_graph_view_set_marks (self->after_view, after_marks);
  fb_graph_view_set_layout (self->after_view, fb_compare_view_get_layout (self, self->stage));
  gtk_widget_set_visible (self->before_box, before != NULL);
  if (before != NULL)
    {
      before_marks = make_marks (after, TRUE);
      fb_graph_view_set_marks (self->before_view, before_marks);
      fb_graph_view_set_layout (self->before_view, fb_compare_view_get_layout (self, self->stage - 1));
    }
  open_groups (self, after, before != NULL);
  if (before != NULL && fb_graph_view_get_scene (self->after_view) != NULL)
    {
      double x, y, zoom;

      /* The left view follows the right one: same groups open, same place. */
      fb_graph_view_get_viewport (self->after_view, &x, &y, &zoom);
      fb_graph_view_set_viewport (self->before_view, x, y, zoom);
    }
  self->syncing = FALSE;
  update_headers (self, before, after);
  try_focus (self);
}

void
fb_compare_view_set_run (FbCompareView *self,
                         FbRun         *run)
{
  guint kept = 0;

  g_return_if_fail (FB_IS_COMPARE_VIEW (self));

  if (run == self->run)
    return;
  if (run != NULL)
    fb_run_ref (run);
  /* A re-run keeps the stages before the first pass it redid, the same objects: their layouts
   * (each seeded by the one before) stay, and the views showing them need no new picture. */
  if (run != NULL && self->run != NULL)
    {
      guint n = MIN (fb_run_n_stages (run), self->layouts->len);

      while (kept < n && fb_run_get_stage (run, kept) == fb_run_get_stage (self->run, kept))
        kept++;
    }
  g_ptr_array_set_size (self->layouts, kept);
  g_clear_pointer (&self->run, fb_run_unref);
  self->run = run;
  if (run != NULL)
    {
      g_ptr_array_set_size (self->layouts, fb_run_n_stages (run));
      if (self->stage >= (int) fb_run_n_stages (run))
        self->stage = fb_run_n_stages (run) - 1;
      if (self->stage < 0)
        self->stage = 0;
      /* The stage on screen redone: what was on screen may be gone or elsewhere. A kept one
         keeps where the user looks. */
      if ((guint) self->stage >= kept)
        self->focus_pending = TRUE;
    }
  apply_stage (self);
}

FbRun *
fb_compare_view_get_run (FbCompareView *self)
{
  g_return_val_if_fail (FB_IS_COMPARE_VIEW (self), NULL);
  return self->run;
}

void
fb_compare_view_set_stage (FbCompareView *self,
                           int            index)
{
  g_return_if_fail (FB_IS_COMPARE_VIEW (self));

  if (self->run != NULL)
    index = CLAMP (index, -1, (int) fb_run_n_stages (self->run) - 1);
  if (index == self->stage)
    return;
  self->stage = index;
  self->focus_pending = TRUE;
  apply_stage (self);
}

void
fb_compare_view_show_changes (FbCompareView *self)
{
  g_return_if_fail (FB_IS_COMPARE_VIEW (self));

  if (self->run == NULL || self->stage < 0)
    return;
  self->focus_pending = TRUE;
  self->syncing = TRUE;
  open_groups (self, fb_run_get_stage (self->run, self->stage), self->stage > 0);
  self->syncing = FALSE;
  try_focus (self);
}

void
fb_compare_view_set_constants (FbCompareView    *self,
                               FbGraphConstants  constants)
{
  g_return_if_fail (FB_IS_COMPARE_VIEW (self));

  if (constants == self->constants)
    return;
  self->constants = constants;
  if (self->run == NULL)
    return;
  /* Every box changes size: every layout is made again, seeded one by the other as before. */
  g_ptr_array_set_size (self->layouts, 0);
  g_ptr_array_set_size (self->layouts, fb_run_n_stages (self->run));
  self->focus_pending = TRUE;
  apply_stage (self);
}

FbGraphConstants
fb_compare_view_get_constants (FbCompareView *self)
{
  g_return_val_if_fail (FB_IS_COMPARE_VIEW (self), FB_GRAPH_CONSTANTS_AS_ROWS);
  return self->constants;
}

int
fb_compare_view_get_stage (FbCompareView *self)
{
  g_return_val_if_fail (FB_IS_COMPARE_VIEW (self), -1);
  return self->stage;
}

FbGraphView *
fb_compare_view_get_before_view (FbCompareView *self)
{
  g_return_val_if_fail (FB_IS_COMPARE_VIEW (self), NULL);
  return self->before_view;
}

FbGraphView *
fb_compare_view_get_after_view (FbCompareView *self)
{
  g_return_val_if_fail (FB_IS_COMPARE_VIEW (self), NULL);
  return self->after_view;
}

FbGraphView *
fb_compare_view_get_active_view (FbCompareView *self)
{
  g_return_val_if_fail (FB_IS_COMPARE_VIEW (self), NULL);

  if (!gtk_widget_get_visible (self->before_box))
    return self->after_view;
  return self->active;
}

char *
fb_compare_view_describe_mark (FbCompareView *self,
                               FbGraphView   *view,
                               const FbNode  *node)
{
  FbStage *stage;

  g_return_val_if_fail (FB_IS_COMPARE_VIEW (self), NULL);
  g_return_val_if_fail (node != NULL, NULL);

  if (self->run == NULL || self->stage < 1)
    return NULL;
  stage = fb_run_get_stage (self->run, self->stage);
  switch (fb_graph_view_get_mark (view, node))
    {
    case FB_GRAPH_MARK_ADDED:
      return g_strdup_printf ("Added by %s", stage->name);
    case FB_GRAPH_MARK_REMOVED:
      return g_strdup_printf ("Removed by %s", stage->name);
    case FB_GRAPH_MARK_CHANGED:
      return g_strdup_printf ("Changed by %s", stage->name);
    case FB_GRAPH_MARK_FUSED:
      return g_strdup_printf ("Fused by %s", stage->name);
    case FB_GRAPH_MARK_NONE:
    default:
      return NULL;
    }
}

/* The node of the other side that stands for node id of this side. */
static guint
counterpart (FbCompareView *self,
             FbGraphView   *from,
             guint          id)
{
  if (from == self->before_view)
    {
      FbChange *change = g_hash_table_lookup (self->change_of, GUINT_TO_POINTER (id));

      if (change != NULL && change->kind == FB_CHANGE_FUSED)
        return change->fused_into;
      if (change != NULL && change->kind == FB_CHANGE_REMOVED && change->went_to != 0)
        return change->went_to;
      return id;
    }
  if (g_hash_table_contains (self->first_member, GUINT_TO_POINTER (id)))
    return GPOINTER_TO_UINT (g_hash_table_lookup (self->first_member, GUINT_TO_POINTER (id)));
  return id;
}

static void
on_selection_changed (FbGraphView   *view,
                      FbCompareView *self)
{
  FbGraphView *other = view == self->before_view ? self->after_view : self->before_view;
  FbNode *node = fb_graph_view_get_selected_node (view);
  FbGraphGroup *group = fb_graph_view_get_selected_group (view);

  if (self->syncing)
    return;
  self->active = view;
  self->syncing = TRUE;
  if (gtk_widget_get_visible (self->before_box))
    {
      const FbValue *constant = fb_graph_view_get_selected_constant (view);

      /* A constant is the same value on both sides, whether a Constant node or an initializer
         makes it there (fold-constants turns the one into the other, keeping the value's id). */
      if (constant != NULL && fb_graph_view_select_constant (other, constant->id))
        ;
      else if (node != NULL)
        {
          if (!fb_graph_view_select_node (other, counterpart (self, view, node->id)))
            fb_graph_view_clear_selection (other);
        }
      else if (group == NULL || !fb_graph_view_select_group (other, fb_graph_group_get_path (group)))
        fb_graph_view_clear_selection (other);
    }
  self->syncing = FALSE;
  g_signal_emit (self, signals[SELECTION_CHANGED], 0, view);
}

static void
on_viewport_changed (FbGraphView   *view,
                     FbCompareView *self)
{
  FbGraphView *other = view == self->before_view ? self->after_view : self->before_view;
  double x, y, zoom;

  if (self->syncing || !gtk_widget_get_visible (self->before_box))
    return;
  self->syncing = TRUE;
  fb_graph_view_get_viewport (view, &x, &y, &zoom);
  fb_graph_view_set_viewport (other, x, y, zoom);
  self->syncing = FALSE;
}

static void
on_group_toggled (FbGraphView   *view,
                  const char    *path,
                  gboolean       expanded,
                  FbCompareView *self)
{
  FbGraphView *other = view == self->before_view ? self->after_view : self->before_view;

  if (self->syncing)
    return;
  self->syncing = TRUE;
  fb_graph_view_set_group_expanded (other, path, expanded);
  self->syncing = FALSE;
}

static void
on_scene_changed (FbGraphView   *view,
                  FbCompareView *self)
{
  FbGraphView *other = view == self->before_view ? self->after_view : self->before_view;
  double x, y, zoom;

  if (self->syncing || try_focus (self))
    return;
  /* A view that got its first picture and fitted it: the other one follows. */
  if (!gtk_widget_get_visible (self->before_box) || fb_graph_view_get_scene (other) == NULL)
    return;
  self->syncing = TRUE;
  fb_graph_view_get_viewport (self->after_view, &x, &y, &zoom);
  fb_graph_view_set_viewport (self->before_view, x, y, zoom);
  self->syncing = FALSE;
}

static void
fb_compare_view_dispose (GObject *object)
{
  FbCompareView *self = FB_COMPARE_VIEW (object);
  GtkWidget *child;

  gtk_widget_dispose_template (GTK_WIDGET (self), FB_TYPE_COMPARE_VIEW);
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))) != NULL)
    gtk_widget_unparent (child);
  g_clear_pointer (&self->layouts, g_ptr_array_unref);
  g_clear_pointer (&self->run, fb_run_unref);
  g_clear_pointer (&self->change_of, g_hash_table_unref);
  g_clear_pointer (&self->first_member, g_hash_table_unref);

  G_OBJECT_CLASS (fb_compare_view_parent_class)->dispose (object);
}

static void
fb_compare_view_class_init (FbCompareViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = fb_compare_view_dispose;

  /* (view): the view whose selection changed. */
  signals[SELECTION_CHANGED] =
    g_signal_new ("selection-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, FB_TYPE_GRAPH_VIEW);

  g_type_ensure (FB_TYPE_GRAPH_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/fusebench/Fusebench/ui/fb-compare-view.ui");
  gtk_widget_class_bind_template_child (widget_class, FbCompareView, before_box);
  gtk_widget_class_bind_template_child (widget_class, FbCompareView, before_title);
  gtk_widget_class_bind_template_child (widget_class, FbCompareView, before_info);
  gtk_widget_class_bind_template_child (widget_class, FbCompareView, after_title);
  gtk_widget_class_bind_template_child (widget_class, FbCompareView, after_info);
  gtk_widget_class_bind_template_child (widget_class, FbCompareView, before_view);
  gtk_widget_class_bind_template_child (widget_class, FbCompareView, after_view);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "compareview");
}

static void
fb_compare_view_init (FbCompareView *self)
{
  FbGraphView *views[2];

  gtk_widget_init_template (GTK_WIDGET (self));
  self->stage = -1;
  self->layouts = g_ptr_array_new_with_free_func (layout_unref0);
  self->change_of = g_hash_table_new (NULL, NULL);
  self->first_member = g_hash_table_new (NULL, NULL);
  self->active = self->after_view;
  views[0] = self->before_view;
  views[1] = self->after_view;
  for (guint i = 0; i < 2; i++)
    {
      g_signal_connect_object (views[i], "selection-changed", G_CALLBACK (on_selection_changed), self, 0);
      g_signal_connect_object (views[i], "viewport-changed", G_CALLBACK (on_viewport_changed), self, 0);
      g_signal_connect_object (views[i], "group-toggled", G_CALLBACK (on_group_toggled), self, 0);
      g_signal_connect_object (views[i], "scene-changed", G_CALLBACK (on_scene_changed), self, 0);
    }
}
