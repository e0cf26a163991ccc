/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Input shapes (win.input-shapes): what the command line pins with --input-shape, in the window.
 * A model with dynamic dimensions cannot be lowered, run or profiled until every extent of its
 * inputs is known; the dialog offers one entry per open dimension, and Apply puts the pins in the
 * window's options, so that the passes, the code view's kernels and Profile all see the same
 * concrete shapes. The pins are remembered per model (the settings' input-shapes, as
 * --input-shape text) and taken again when the model is opened. */
#include "fb-infer.h"
#include "fb-window-private.h"

#include <string.h>

/* One open dimension of one input (d == -1: the input's rank is unknown, the whole shape is
 * typed), and the entry it is typed in. */
typedef struct {
  char        *input;
  int          d;
  const char  *sym;
  GtkEditable *entry;
  GtkWidget   *row;
} OpenDim;

typedef struct {
  FbWindow  *window;   /* weak: the dialog is destroyed with it */
  FbGraph   *graph;    /* the import as the model declares it (a reference to the run's stage) */
  FbStage   *import;
  GPtrArray *dims;     /* OpenDim* */
  GtkLabel  *message;  /* what is wrong with the text typed, hidden when nothing is */
} Dialog;

static void
open_dim_free (gpointer data)
{
  OpenDim *dim = data;

  g_free (dim->input);
  g_free (dim);
}

static void
dialog_free (gpointer data)
{
  Dialog *dialog = data;

  if (dialog->window != NULL)
    g_object_remove_weak_pointer (G_OBJECT (dialog->window), (gpointer *) &dialog->window);
  g_clear_pointer (&dialog->import, fb_stage_unref);
  g_clear_pointer (&dialog->dims, g_ptr_array_unref);
  g_free (dialog);
}

static GSettings *
settings_of (FbWindow *self)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));

  return app != NULL ? fb_application_get_settings (FB_APPLICATION (app)) : NULL;
}

/* ---- remembered per model ----------------------------------------------------------------- */

/* Writes the window's pins for its model into the settings (none: the model's entry goes). */
static void
remember (FbWindow *self)
{
  GSettings *settings = settings_of (self);
  g_autofree char *key = _fb_window_model_key (self);
  g_autoptr(GVariant) map = NULL;
  g_autoptr(GList) names = NULL;
  GVariantBuilder builder, specs;
  GVariantIter iter;
  const char *k;
  GVariant *v;

  if (settings == NULL)
    return;
  map = g_settings_get_value (settings, "input-shapes");
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a{sas}"));
  g_variant_iter_init (&iter, map);
  while (g_variant_iter_next (&iter, "{&s@as}", &k, &v))
    {
      if (!g_str_equal (k, key))
        g_variant_builder_add (&builder, "{s@as}", k, v);
      g_variant_unref (v);
    }
  if (g_hash_table_size (self->options->input_shapes) > 0)
    {
      /* Sorted, so that the same pins are always the same text. */
      names = g_list_sort (g_hash_table_get_keys (self->options->input_shapes),
                           (GCompareFunc) strcmp);
      g_variant_builder_init (&specs, G_VARIANT_TYPE ("as"));
      for (GList *l = names; l != NULL; l = l->next)
        {
          g_autofree char *shape = fb_shape_to_string (g_hash_table_lookup (self->options->input_shapes,
                                                                            l->data));
          g_autofree char *spec = g_strdup_printf ("%s=%s", (const char *) l->data, shape);

          g_variant_builder_add (&specs, "s", spec);
        }
      g_variant_builder_add (&builder, "{s@as}", key, g_variant_builder_end (&specs));
    }
  g_settings_set_value (settings, "input-shapes", g_variant_builder_end (&builder));
}

void
_fb_window_input_shapes_model_changed (FbWindow *self)
{
  GSettings *settings = settings_of (self);
  g_autofree char *key = _fb_window_model_key (self);
  g_autoptr(GVariant) map = NULL;
  g_autofree const char **specs = NULL;

  if (settings == NULL)
    return;
  map = g_settings_get_value (settings, "input-shapes");
  if (!g_variant_lookup (map, key, "^a&s", &specs))
    return;
  for (guint i = 0; specs[i] != NULL; i++)
    {
      const char *eq = strrchr (specs[i], '=');
      FbShape shape;

      /* Text edited by hand that does not parse is left out; the rest still applies. */
      if (eq == NULL || eq == specs[i] || !fb_shape_parse (eq + 1, &shape, NULL))
        continue;
      g_hash_table_insert (self->options->input_shapes, g_strndup (specs[i], eq - specs[i]),
                           g_memdup2 (&shape, sizeof shape));
    }
}

/* ---- the dialog --------------------------------------------------------------------------- */

static Dialog *
dialog_of (GtkWidget *widget)
{
  return g_object_get_data (G_OBJECT (widget), "fb-input-shapes");
}

/* Batch-like extents start at 1, the size of one request; the others (a sequence length, an
 * image size) are the user's to say. The leading dimension counts as a batch when it has no name
 * or only an exporter's generated one. */
static gboolean
batch_like (int d, const char *sym)
{
  g_autofree char *lower = sym != NULL ? g_ascii_strdown (sym, -1) : NULL;

  if (sym == NULL || strstr (sym, "DynamicDimension") != NULL)
    return d == 0;
  return g_str_equal (lower, "n") || g_str_equal (lower, "b") || strstr (lower, "batch") != NULL;
}

static char *
initial_text (FbWindow      *self,
              const FbValue *input,
              int            d)
{
  const FbShape *pin = g_hash_table_lookup (self->options->input_shapes, input->name);

  if (d < 0)
    return pin != NULL ? fb_shape_to_string (pin) : g_strdup ("");
  if (pin != NULL && pin->rank == input->shape.rank && pin->dim[d] > 0)
    return g_strdup_printf ("%" G_GINT64_FORMAT, pin->dim[d]);
  return g_strdup (batch_like (d, input->shape.sym[d]) ? "1" : "");
}

static void
say (Dialog     *dialog,
     const char *text)
{
  gtk_label_set_label (dialog->message, text != NULL ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (dialog->message), text != NULL);
}

static void
on_entry_changed (GtkEditable *entry,
                  Dialog      *dialog)
{
  for (guint i = 0; i < dialog->dims->len; i++)
    {
      OpenDim *dim = g_ptr_array_index (dialog->dims, i);

      if (dim->entry == entry)
        gtk_widget_remove_css_class (dim->row, "error");
    }
  say (dialog, NULL);
}

static char *
dim_title (const OpenDim *dim)
{
  g_autofree char *name = NULL;

  if (dim->d < 0)
    return g_strdup ("Shape (its rank is unknown), e.g. 1x3x224x224");
  if (dim->sym == NULL)
    return g_strdup_printf ("Dimension %d", dim->d);
  name = fb_dim_short_name (dim->sym);
  return g_str_equal (name, dim->sym) ? g_strdup_printf ("Dimension %d (%s)", dim->d, dim->sym)
                                      : g_strdup_printf ("Dimension %d (%s, %s)", dim->d, name,
                                                         dim->sym);
}

/* The pins the dialog's text makes, or NULL with the reason said under the rows and the entry
 * at fault focused. */
static GHashTable *
read_pins (Dialog *dialog)
{
  g_autoptr(GHashTable) pins = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  for (guint i = 0; i < dialog->dims->len; i++)
    {
      OpenDim *dim = g_ptr_array_index (dialog->dims, i);
      g_autofree char *text = g_strstrip (g_strdup (gtk_editable_get_text (dim->entry)));
      g_autoptr(GError) error = NULL;
      g_autofree char *problem = NULL;
      FbShape *shape = g_hash_table_lookup (pins, dim->input);
      guint64 extent = 0;

      if (shape == NULL)
        {
          FbValue *input = NULL;

          for (guint j = 0; j < dialog->graph->inputs->len && input == NULL; j++)
            if (g_str_equal (((FbValue *) g_ptr_array_index (dialog->graph->inputs, j))->name,
                             dim->input))
              input = g_ptr_array_index (dialog->graph->inputs, j);
          shape = g_memdup2 (&input->shape, sizeof *shape);
          g_hash_table_insert (pins, g_strdup (dim->input), shape);
        }
      if (dim->d < 0)
        {
          if (!fb_shape_parse (text, shape, &error) || !fb_shape_is_static (shape))
            problem = g_strdup_printf ("%s: “%s” is not a shape of whole numbers such as 1x3x224x224",
                                       dim->input, text);
        }
      else if (!g_ascii_string_to_unsigned (text, 10, 1, G_MAXINT32, &extent, &error))
        {
          g_autofree char *title = dim_title (dim);

          problem = *text == '\0'
                      ? g_strdup_printf ("%s, %s: give it a size", dim->input, title)
                      : g_strdup_printf ("%s, %s: “%s” is not a positive whole number",
                                         dim->input, title, text);
        }
      else
        {
          shape->dim[dim->d] = (int64_t) extent;
          shape->sym[dim->d] = NULL;
        }
      if (problem != NULL)
        {
          gtk_widget_add_css_class (dim->row, "error");
          gtk_widget_grab_focus (GTK_WIDGET (dim->entry));
          say (dialog, problem);
          return NULL;
        }
    }
  /* A symbolic name is one extent across the model: two inputs that share it must agree. Checked
   * here, so that the message is said in the dialog rather than by a failed run. */
  {
    g_autoptr(GError) error = NULL;

    if (!fb_graph_check_pins (dialog->graph, pins, &error))
      {
        say (dialog, error->message);
        return NULL;
      }
  }
  return g_steal_pointer (&pins);
}

/* The new pins replace the old, are remembered for the model, and the passes run again with them:
 * the kernels and Profile follow the run on screen. */
static void
use_pins (FbWindow   *self,
          GHashTable *pins)
{
  GHashTableIter it;
  gpointer key, value;

  g_hash_table_remove_all (self->options->input_shapes);
  if (pins != NULL)
    {
      g_hash_table_iter_init (&it, pins);
      while (g_hash_table_iter_next (&it, &key, &value))
        g_hash_table_insert (self->options->input_shapes, g_strdup (key),
                             g_memdup2 (value, sizeof (FbShape)));
    }
  remember (self);
  _fb_window_rerun (self);
}

static void
apply_action (GSimpleAction *action,
              GVariant      *parameter,
              GtkWidget     *widget)
{
  Dialog *dialog = dialog_of (widget);
  g_autoptr(GHashTable) pins = NULL;

  if (dialog->window == NULL || (pins = read_pins (dialog)) == NULL)
    return;
  use_pins (dialog->window, pins);
  gtk_window_destroy (GTK_WINDOW (widget));
}

static void
clear_action (GSimpleAction *action,
              GVariant      *parameter,
              GtkWidget     *widget)
{
  Dialog *dialog = dialog_of (widget);

  if (dialog->window != NULL)
    use_pins (dialog->window, NULL);
  gtk_window_destroy (GTK_WINDOW (widget));
}

static void
add_input (FbWindow      *self,
           Dialog        *dialog,
           GtkBox        *box,
           const FbValue *input)
{
  AdwPreferencesGroup *group = ADW_PREFERENCES_GROUP (adw_preferences_group_new ());
  g_autofree char *declared = fb_shape_to_display (&input->shape);
  g_autofree char *symbols = fb_shape_symbols_text (&input->shape);
  g_autofree char *description = symbols != NULL
                                   ? g_strdup_printf ("Declared %s\n%s", declared, symbols)
                                   : g_strdup_printf ("Declared %s", declared);

  adw_preferences_group_set_title (group, input->name);
  adw_preferences_group_set_description (group, description);
  for (int d = input->shape.rank < 0 ? -1 : 0; d < MAX (input->shape.rank, 0); d++)
    {
      OpenDim *dim;
      g_autofree char *title = NULL, *text = NULL;
      GtkWidget *row;

      if (d >= 0 && input->shape.dim[d] >= 0)
        continue;
      dim = g_new0 (OpenDim, 1);
      dim->input = g_strdup (input->name);
      dim->d = d;
      dim->sym = d >= 0 ? input->shape.sym[d] : NULL;
      title = dim_title (dim);
      text = initial_text (self, input, d);
      row = adw_entry_row_new ();
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
      gtk_editable_set_text (GTK_EDITABLE (row), text);
      g_object_set_data_full (G_OBJECT (row), "fb-input", g_strdup (input->name), g_free);
      g_object_set_data (G_OBJECT (row), "fb-dim", GINT_TO_POINTER (d));
      g_signal_connect (row, "changed", G_CALLBACK (on_entry_changed), dialog);
      dim->entry = GTK_EDITABLE (row);
      dim->row = row;
      g_ptr_array_add (dialog->dims, dim);
      adw_preferences_group_add (group, row);
    }
  gtk_box_append (box, GTK_WIDGET (group));
}

static void
on_entry_activated (AdwEntryRow *row,
                    GtkWidget   *window)
{
  gtk_widget_activate_action (window, "shapes.apply", NULL);
}

static GtkWidget *
button (const char *label,
        const char *action)
{
  GtkWidget *b = gtk_button_new_with_mnemonic (label);

  gtk_actionable_set_action_name (GTK_ACTIONABLE (b), action);
  return b;
}

static void
input_shapes_action (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  FbWindow *self = FB_WINDOW (widget);
  Dialog *dialog;
  GtkWidget *window, *header, *scrolled, *box, *apply;
  g_autofree char *heading = NULL;

  if (self->shapes_dialog != NULL)
    {
      gtk_window_present (self->shapes_dialog);
      return;
    }
  if (self->run == NULL)
    {
      _fb_window_show_error (self, "Open a model first: its inputs’ shapes are set here");
      return;
    }
  dialog = g_new0 (Dialog, 1);
  dialog->window = self;
  /* The import stage is the model as declared: the pins are applied after it. */
  dialog->import = fb_stage_ref (fb_run_get_stage (self->run, 0));
  dialog->graph = dialog->import->graph;
  dialog->dims = g_ptr_array_new_with_free_func (open_dim_free);

  window = gtk_window_new ();
  g_object_set_data_full (G_OBJECT (window), "fb-input-shapes", dialog, dialog_free);
  gtk_window_set_title (GTK_WINDOW (window), "Input Shapes");
  gtk_window_set_modal (GTK_WINDOW (window), TRUE);
  gtk_window_set_transient_for (GTK_WINDOW (window), GTK_WINDOW (self));
  gtk_window_set_destroy_with_parent (GTK_WINDOW (window), TRUE);
  gtk_window_set_default_size (GTK_WINDOW (window), 460, 420);

  header = gtk_header_bar_new ();
  gtk_header_bar_set_show_title_buttons (GTK_HEADER_BAR (header), FALSE);
  gtk_header_bar_pack_start (GTK_HEADER_BAR (header), button ("_Cancel", "window.close"));
  apply = button ("_Apply", "shapes.apply");
  gtk_widget_add_css_class (apply, "suggested-action");
  gtk_header_bar_pack_end (GTK_HEADER_BAR (header), apply);
  gtk_header_bar_pack_end (GTK_HEADER_BAR (header), button ("C_lear", "shapes.clear"));
  gtk_window_set_titlebar (GTK_WINDOW (window), header);

  box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 18);
  g_object_set (box, "margin-top", 18, "margin-bottom", 18, "margin-start", 18, "margin-end", 18,
                NULL);
  heading = g_strdup_printf ("The shapes %s is compiled, run and profiled with. The dimensions "
                             "the model leaves open need a size; the command line’s "
                             "--input-shape sets the same.", self->model_title);
  {
    GtkWidget *label = gtk_label_new (heading);

    gtk_label_set_wrap (GTK_LABEL (label), TRUE);
    gtk_label_set_xalign (GTK_LABEL (label), 0);
    gtk_widget_add_css_class (label, "dim-label");
    gtk_box_append (GTK_BOX (box), label);
  }
  for (guint i = 0; i < dialog->graph->inputs->len; i++)
    {
      FbValue *input = g_ptr_array_index (dialog->graph->inputs, i);

      if (!fb_shape_is_static (&input->shape))
        add_input (self, dialog, GTK_BOX (box), input);
    }
  for (guint i = 0; i < dialog->dims->len; i++)
    {
      OpenDim *dim = g_ptr_array_index (dialog->dims, i);

      g_signal_connect_object (dim->row, "entry-activated", G_CALLBACK (on_entry_activated),
                               window, 0);
    }
  if (dialog->dims->len == 0)
    {
      GtkWidget *label = gtk_label_new ("Every input of this model has a fixed shape: there is "
                                        "nothing to set.");

      gtk_label_set_wrap (GTK_LABEL (label), TRUE);
      gtk_box_append (GTK_BOX (box), label);
      gtk_widget_set_sensitive (apply, FALSE);
    }
  dialog->message = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (dialog->message, TRUE);
  gtk_label_set_xalign (dialog->message, 0);
  gtk_widget_add_css_class (GTK_WIDGET (dialog->message), "error");
  gtk_widget_set_visible (GTK_WIDGET (dialog->message), FALSE);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (dialog->message));

  scrolled = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scrolled), GTK_POLICY_NEVER,
                                  GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scrolled), box);
  gtk_window_set_child (GTK_WINDOW (window), scrolled);

  /* The actions live on the dialog's own widgets: the window's class cannot hold them. */
  {
    GSimpleActionGroup *group = g_simple_action_group_new ();
    GSimpleAction *a;

    a = g_simple_action_new ("apply", NULL);
    g_signal_connect (a, "activate", G_CALLBACK (apply_action), window);
    g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (a));
    g_object_unref (a);
    a = g_simple_action_new ("clear", NULL);
    g_signal_connect (a, "activate", G_CALLBACK (clear_action), window);
    g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (a));
    g_object_unref (a);
    gtk_widget_insert_action_group (window, "shapes", G_ACTION_GROUP (group));
    g_object_unref (group);
  }

  self->shapes_dialog = GTK_WINDOW (window);
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *) &self->shapes_dialog);
  g_object_add_weak_pointer (G_OBJECT (self), (gpointer *) &dialog->window);
  gtk_window_present (GTK_WINDOW (window));
}

GtkWindow *
fb_window_get_input_shapes_dialog (FbWindow *self)
{
  g_return_val_if_fail (FB_IS_WINDOW (self), NULL);

  return self->shapes_dialog;
}

void
_fb_window_input_shapes_dispose (FbWindow *self)
{
  if (self->shapes_dialog != NULL)
    gtk_window_destroy (self->shapes_dialog);
}

void
_fb_window_class_init_input_shapes (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.input-shapes", NULL, input_shapes_action);
}
