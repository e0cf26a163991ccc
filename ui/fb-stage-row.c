/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-stage-row.h"

struct _FbStageRow {
  GtkListBoxRow  parent_instance;

  GtkCheckButton *check;
  GtkLabel       *name_label;
  GtkLabel       *summary_label;
  GtkLabel       *time_label;
  GtkLabel       *nodes_label;

  char           *name;
  guint           index;
};

G_DEFINE_FINAL_TYPE (FbStageRow, fb_stage_row, GTK_TYPE_LIST_BOX_ROW)

enum {
  TOGGLED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
on_check_toggled (FbStageRow *self)
{
  gboolean active = gtk_check_button_get_active (self->check);

  gtk_widget_set_opacity (GTK_WIDGET (self->name_label), active ? 1.0 : 0.55);
  g_signal_emit (self, signals[TOGGLED], 0, active);
}

static char *
format_ms (double ms)
{
  if (ms < 0.1)
    return g_strdup_printf ("%.0f µs", ms * 1000);
  if (ms < 100)
    return g_strdup_printf ("%.1f ms", ms);
  return g_strdup_printf ("%.2f s", ms / 1000);
}

GtkWidget *
fb_stage_row_new (const FbStage *stage,
                  guint          index,
                  gboolean       toggleable)
{
  FbStageRow *self;
  g_autofree char *time = NULL;
  g_autofree char *nodes = NULL;

  g_return_val_if_fail (stage != NULL, NULL);

  self = g_object_new (FB_TYPE_STAGE_ROW, NULL);
  self->name = g_strdup (stage->name);
  self->index = index;
  gtk_label_set_label (self->name_label, stage->name);
  gtk_label_set_label (self->summary_label, stage->summary != NULL ? stage->summary : "");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->summary_label), stage->summary);

  /* The stage that loads has no pass to time or switch off. */
  if (index == 0)
    nodes = g_strdup_printf ("%u nodes", stage->nodes_after);
  else
    {
      time = format_ms (stage->wall_ms);
      nodes = g_strdup_printf ("%u → %u", stage->nodes_before, stage->nodes_after);
    }
  gtk_label_set_label (self->time_label, time != NULL ? time : "");
  gtk_widget_set_visible (GTK_WIDGET (self->time_label), time != NULL);
  gtk_label_set_label (self->nodes_label, nodes);
  if (stage->nodes_before == stage->nodes_after || index == 0)
    gtk_widget_add_css_class (GTK_WIDGET (self->nodes_label), "dim-label");
  else
    gtk_widget_add_css_class (GTK_WIDGET (self->nodes_label), "accent");

  g_signal_handlers_block_by_func (self->check, on_check_toggled, self);
  gtk_check_button_set_active (self->check, stage->enabled);
  g_signal_handlers_unblock_by_func (self->check, on_check_toggled, self);
  gtk_widget_set_opacity (GTK_WIDGET (self->name_label), stage->enabled ? 1.0 : 0.55);
  /* Keep the columns aligned: an invisible box still takes its room. */
  gtk_widget_set_opacity (GTK_WIDGET (self->check), toggleable ? 1.0 : 0.0);
  gtk_widget_set_sensitive (GTK_WIDGET (self->check), toggleable);
  gtk_widget_set_can_target (GTK_WIDGET (self->check), toggleable);
  return GTK_WIDGET (self);
}

guint
fb_stage_row_get_index (FbStageRow *self)
{
  g_return_val_if_fail (FB_IS_STAGE_ROW (self), 0);
  return self->index;
}

const char *
fb_stage_row_get_name (FbStageRow *self)
{
  g_return_val_if_fail (FB_IS_STAGE_ROW (self), NULL);
  return self->name;
}

gboolean
fb_stage_row_get_active (FbStageRow *self)
{
  g_return_val_if_fail (FB_IS_STAGE_ROW (self), FALSE);
  return gtk_check_button_get_active (self->check);
}

void
fb_stage_row_set_active (FbStageRow *self,
                         gboolean    active)
{
  g_return_if_fail (FB_IS_STAGE_ROW (self));
  gtk_check_button_set_active (self->check, active);
}

static void
fb_stage_row_finalize (GObject *object)
{
  FbStageRow *self = FB_STAGE_ROW (object);

  g_free (self->name);

  G_OBJECT_CLASS (fb_stage_row_parent_class)->finalize (object);
}

static void
fb_stage_row_class_init (FbStageRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = fb_stage_row_finalize;

  signals[TOGGLED] =
    g_signal_new ("toggled", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BOOLEAN);

  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/fusebench/Fusebench/ui/fb-stage-row.ui");
  gtk_widget_class_bind_template_child (widget_class, FbStageRow, check);
  gtk_widget_class_bind_template_child (widget_class, FbStageRow, name_label);
  gtk_widget_class_bind_template_child (widget_class, FbStageRow, summary_label);
  gtk_widget_class_bind_template_child (widget_class, FbStageRow, time_label);
  gtk_widget_class_bind_template_child (widget_class, FbStageRow, nodes_label);
  gtk_widget_class_bind_template_callback (widget_class, on_check_toggled);
}

static void
fb_stage_row_init (FbStageRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
