/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The profile panel's Top Kernels table: its columns, what each cell shows and sorts by, and the
 * tooltip of a kernel that runs several original nodes, written only when asked for. */
#include "fb-kernel-table-private.h"

static const struct {
  const char *title;
  gboolean    numeric;
} columns[FB_KERNEL_N_COLUMNS] = {
  [FB_KERNEL_COLUMN_NAME]     = { "Kernel", FALSE },
  [FB_KERNEL_COLUMN_KIND]     = { "Kind", FALSE },
  [FB_KERNEL_COLUMN_NODES]    = { "Original Nodes", FALSE },
  [FB_KERNEL_COLUMN_CALLS]    = { "Calls", TRUE },
  [FB_KERNEL_COLUMN_TIME]     = { "Time", TRUE },
  [FB_KERNEL_COLUMN_SHARE]    = { "Share", TRUE },
  [FB_KERNEL_COLUMN_BYTES]    = { "Bytes", TRUE },
  [FB_KERNEL_COLUMN_GBPS]     = { "GB/s", TRUE },
  [FB_KERNEL_COLUMN_GFLOPS]   = { "GFLOP/s", TRUE },
  [FB_KERNEL_COLUMN_BOUND]    = { "Bound", FALSE },
  [FB_KERNEL_COLUMN_ROOFLINE] = { "Roofline", TRUE },
};

static int
compare_rows (gconstpointer a,
              gconstpointer b,
              gpointer      data)
{
  const FbProfileKernel *x = fb_kernel_row_get_kernel ((FbKernelRow *) a);
  const FbProfileKernel *y = fb_kernel_row_get_kernel ((FbKernelRow *) b);
  FbKernelColumn column = GPOINTER_TO_INT (data);
  double kx, ky;

  if (column == FB_KERNEL_COLUMN_NAME)
    return g_strcmp0 (x->name, y->name);
  kx = fb_kernel_row_get_sort_key ((FbKernelRow *) a, column);
  ky = fb_kernel_row_get_sort_key ((FbKernelRow *) b, column);
  if (kx != ky)
    return kx < ky ? GTK_ORDERING_SMALLER : GTK_ORDERING_LARGER;
  return x->id < y->id ? GTK_ORDERING_SMALLER : x->id > y->id ? GTK_ORDERING_LARGER : GTK_ORDERING_EQUAL;
}

/* A kernel that runs several original nodes says how its time was split, when asked: written
 * for the one cell under the pointer, never for every row a profile brings. */
static gboolean
on_nodes_query_tooltip (GtkWidget   *label,
                        int          x,
                        int          y,
                        gboolean     keyboard,
                        GtkTooltip  *tooltip,
                        GtkListItem *item)
{
  FbKernelRow *row = gtk_list_item_get_item (item);
  const FbProfileKernel *k;
  g_autoptr(GString) all = NULL;

  if (row == NULL || (k = fb_kernel_row_get_kernel (row))->nodes->len <= 1)
    return FALSE;
  all = g_string_new ("Split by the cost model across:");
  for (guint i = 0; i < k->nodes->len; i++)
    g_string_append_printf (all, "\n%s (%.0f %%)", (const char *) g_ptr_array_index (k->nodes, i),
                            k->node_shares != NULL && i < k->node_shares->len
                            ? 100 * g_array_index (k->node_shares, double, i) : 0.0);
  gtk_tooltip_set_text (tooltip, all->str);
  return TRUE;
}

/* The order of the Time column sorted descending: compare_rows turned round. */
static int
compare_time_descending (gconstpointer a,
                         gconstpointer b)
{
  const FbProfileKernel *x = fb_kernel_row_get_kernel (*(FbKernelRow **) a);
  const FbProfileKernel *y = fb_kernel_row_get_kernel (*(FbKernelRow **) b);

  if (x->median_us != y->median_us)
    return x->median_us > y->median_us ? -1 : 1;
  return x->id > y->id ? -1 : x->id < y->id ? 1 : 0;
}

static void
setup_cell (GtkSignalListItemFactory *factory,
            GtkListItem              *item,
            gpointer                  data)
{
  GtkWidget *label = gtk_label_new (NULL);
  FbKernelColumn column = GPOINTER_TO_INT (data);

  gtk_label_set_xalign (GTK_LABEL (label), columns[column].numeric ? 1 : 0);
  gtk_label_set_ellipsize (GTK_LABEL (label), column == FB_KERNEL_COLUMN_NAME || column == FB_KERNEL_COLUMN_NODES ? PANGO_ELLIPSIZE_MIDDLE
                                                                                       : PANGO_ELLIPSIZE_NONE);
  if (columns[column].numeric)
    gtk_widget_add_css_class (label, "numeric");
  if (column == FB_KERNEL_COLUMN_NODES)
    {
      /* The item outlives its child label: the handler needs no disconnecting. */
      gtk_widget_set_has_tooltip (label, TRUE);
      g_signal_connect (label, "query-tooltip", G_CALLBACK (on_nodes_query_tooltip), item);
    }
  gtk_list_item_set_child (item, label);
}

static void
bind_cell (GtkSignalListItemFactory *factory,
           GtkListItem              *item,
           gpointer                  data)
{
  FbKernelRow *row = gtk_list_item_get_item (item);
  g_autofree char *text = fb_kernel_row_get_text (row, GPOINTER_TO_INT (data));

  gtk_label_set_label (GTK_LABEL (gtk_list_item_get_child (item)), text);
}

GtkColumnView *
_fb_kernel_table_new (GtkSortListModel    **sorted,
                      GtkColumnViewColumn **time_column)
{
  GtkColumnView *table = GTK_COLUMN_VIEW (gtk_column_view_new (NULL));

  g_assert (sorted != NULL && time_column != NULL);

  gtk_column_view_set_show_column_separators (table, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (table), "data-table");
  for (guint c = 0; c < FB_KERNEL_N_COLUMNS; c++)
    {
      GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
      GtkColumnViewColumn *column;

      g_signal_connect (factory, "setup", G_CALLBACK (setup_cell), GINT_TO_POINTER (c));
      g_signal_connect (factory, "bind", G_CALLBACK (bind_cell), GINT_TO_POINTER (c));
      column = gtk_column_view_column_new (columns[c].title, factory);
      gtk_column_view_column_set_sorter (column, GTK_SORTER (gtk_custom_sorter_new (compare_rows, GINT_TO_POINTER (c), NULL)));
      gtk_column_view_column_set_resizable (column, TRUE);
      gtk_column_view_column_set_expand (column, c == FB_KERNEL_COLUMN_NAME || c == FB_KERNEL_COLUMN_NODES);
      /* Kernel and node names are long and what a row is read by: room for them first. */
      if (c == FB_KERNEL_COLUMN_NAME || c == FB_KERNEL_COLUMN_NODES)
        gtk_column_view_column_set_fixed_width (column, 220);
      gtk_column_view_append_column (table, column);
      if (c == FB_KERNEL_COLUMN_TIME)
        *time_column = column;
      g_object_unref (column);
    }
  *sorted = gtk_sort_list_model_new (NULL, g_object_ref (gtk_column_view_get_sorter (table)));
  return table;
}

void
_fb_kernel_table_sort_rows (GPtrArray *rows)
{
  g_assert (rows != NULL);
  g_ptr_array_sort (rows, compare_time_descending);
}
