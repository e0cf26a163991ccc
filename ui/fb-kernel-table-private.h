/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The Top Kernels table of the profile panel (fb-kernel-table.c). */
#pragma once

#include "fb-kernel-row.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* A column view with a column per FbKernelColumn, each sortable; *sorted (a new reference, with
 * no model yet) orders FbKernelRow items by the columns' headers, *time_column is the Time
 * column (owned by the table). */
GtkColumnView *_fb_kernel_table_new       (GtkSortListModel    **sorted,
                                           GtkColumnViewColumn **time_column);
/* Puts rows (FbKernelRow*) in the order of the Time column sorted descending. */
void           _fb_kernel_table_sort_rows (GPtrArray            *rows);

G_END_DECLS
