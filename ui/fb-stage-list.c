/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-stage-list.h"
#include "fb-stage-row.h"

struct _FbStageList {
  GtkWidget   parent_instance;

  GtkWidget  *scroller;
  GtkListBox *list;

  FbRun      *run;
  int         selected;
  gboolean    rebuilding;
};

G_DEFINE_FINAL_TYPE (FbStageList, fb_stage_list, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_SELECTED,
  N_PROPS
};

enum {
  PASS_TOGGLED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

GtkWidget *
fb_stage_list_new (void)
{
  return g_object_new (FB_TYPE_STAGE_LIST, NULL);
}

static void
on_row_selected (FbStageList   *self,
                 GtkListBoxRow *row)
{
  int selected;

  if (self->rebuilding)
    return;
  selected = row != NULL ? (int) fb_stage_row_get_index (FB_STAGE_ROW (row)) : -1;
  if (selected == self->selected)
    return;
  self->selected = selected;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED]);
}

static void
on_row_toggled (FbStageRow  *row,
                gboolean     active,
                FbStageList *self)
{
  g_signal_emit (self, signals[PASS_TOGGLED], 0, fb_stage_row_get_name (row), active);
}

static gboolean
is_pass (const char *name)
{
  const char * const *passes = fb_pipeline_pass_names ();

  return g_strv_contains (passes, name);
}

void
fb_stage_list_set_run (FbStageList *self,
                       FbRun       *run)
{
  g_autofree char *selected_name = NULL;
  GtkWidget *child;
  int selected = -1;

  g_return_if_fail (FB_IS_STAGE_LIST (self));

  if (self->run != NULL && self->selected >= 0 && (guint) self->selected < fb_run_n_stages (self->run))
    selected_name = g_strdup (fb_run_get_stage (self->run, self->selected)->name);
  if (run != NULL)
    fb_run_ref (run);
  g_clear_pointer (&self->run, fb_run_unref);
  self->run = run;

  self->rebuilding = TRUE;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->list))) != NULL)
    gtk_list_box_remove (self->list, child);
  for (guint i = 0; run != NULL && i < fb_run_n_stages (run); i++)
    {
      FbStage *stage = fb_run_get_stage (run, i);
      GtkWidget *row = fb_stage_row_new (stage, i, is_pass (stage->name));

      g_signal_connect_object (row, "toggled", G_CALLBACK (on_row_toggled), self, 0);
      gtk_list_box_append (self->list, row);
      if (selected_name != NULL && g_strcmp0 (selected_name, stage->name) == 0)
        selected = i;
    }
  if (selected < 0 && run != NULL && fb_run_n_stages (run) > 0)
    selected = MIN (MAX (self->selected, 0), (int) fb_run_n_stages (run) - 1);
  if (selected >= 0)
    gtk_list_box_select_row (self->list, gtk_list_box_get_row_at_index (self->list, selected));
  self->rebuilding = FALSE;
  /* Listeners look at the new run even when the index stays the same. */
  self->selected = selected;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SELECTED]);
}

FbRun *
fb_stage_list_get_run (FbStageList *self)
{
  g_return_val_if_fail (FB_IS_STAGE_LIST (self), NULL);
  return self->run;
}

int
fb_stage_list_get_selected (FbStageList *self)
{
  g_return_val_if_fail (FB_IS_STAGE_LIST (self), -1);
  return self->selected;
}

void
fb_stage_list_select (FbStageList *self,
                      int          index)
{
  GtkListBoxRow *row;

  g_return_if_fail (FB_IS_STAGE_LIST (self));

  row = index >= 0 ? gtk_list_box_get_row_at_index (self->list, index) : NULL;
  if (row != NULL)
    gtk_list_box_select_row (self->list, row);
  else
    gtk_list_box_unselect_all (self->list);
}

guint
fb_stage_list_get_n_rows (FbStageList *self)
{
  g_return_val_if_fail (FB_IS_STAGE_LIST (self), 0);
  return self->run != NULL ? fb_run_n_stages (self->run) : 0;
}

gboolean
fb_stage_list_set_pass_enabled (FbStageList *self,
                                const char  *pass,
                                gboolean     enabled)
{
  g_return_val_if_fail (FB_IS_STAGE_LIST (self), FALSE);
  g_return_val_if_fail (pass != NULL, FALSE);

  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (self->list)); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      if (FB_IS_STAGE_ROW (child) && g_strcmp0 (fb_stage_row_get_name (FB_STAGE_ROW (child)), pass) == 0
          && is_pass (pass))
        {
          fb_stage_row_set_active (FB_STAGE_ROW (child), enabled);
          return TRUE;
        }
    }
  return FALSE;
}

gboolean
fb_stage_list_get_pass_enabled (FbStageList *self,
                                const char  *pass)
{
  g_return_val_if_fail (FB_IS_STAGE_LIST (self), FALSE);
  g_return_val_if_fail (pass != NULL, FALSE);

  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (self->list)); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (FB_IS_STAGE_ROW (child) && g_strcmp0 (fb_stage_row_get_name (FB_STAGE_ROW (child)), pass) == 0)
      return is_pass (pass) && fb_stage_row_get_active (FB_STAGE_ROW (child));
  return FALSE;
}

static void
fb_stage_list_dispose (GObject *object)
{
  FbStageList *self = FB_STAGE_LIST (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), FB_TYPE_STAGE_LIST);
  g_clear_pointer (&self->run, fb_run_unref);

  G_OBJECT_CLASS (fb_stage_list_parent_class)->dispose (object);
}

static void
fb_stage_list_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  FbStageList *self = FB_STAGE_LIST (object);

  switch (prop_id)
    {
    case PROP_SELECTED:
      g_value_set_int (value, self->selected);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
fb_stage_list_class_init (FbStageListClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = fb_stage_list_dispose;
  object_class->get_property = fb_stage_list_get_property;

  properties[PROP_SELECTED] =
    g_param_spec_int ("selected", NULL, NULL, -1, G_MAXINT, -1,
                      G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* (pass name, enabled) */
  signals[PASS_TOGGLED] =
    g_signal_new ("pass-toggled", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_BOOLEAN);

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/fusebench/Fusebench/ui/fb-stage-list.ui");
  gtk_widget_class_bind_template_child (widget_class, FbStageList, scroller);
  gtk_widget_class_bind_template_child (widget_class, FbStageList, list);
  gtk_widget_class_bind_template_callback (widget_class, on_row_selected);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "stagelist");
}

static void
fb_stage_list_init (FbStageList *self)
{
  self->selected = -1;
  gtk_widget_init_template (GTK_WIDGET (self));
}
