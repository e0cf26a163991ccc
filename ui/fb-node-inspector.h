/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The inspector pane: everything about the selected node (op, attributes, inputs and outputs with
 * dtypes and shapes, fused members, the original ONNX nodes it stands for, the kernel that carries
 * its work), initializer or group. */
#pragma once

#include "fb-graph-layout.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FB_TYPE_NODE_INSPECTOR (fb_node_inspector_get_type ())
G_DECLARE_FINAL_TYPE (FbNodeInspector, fb_node_inspector, FB, NODE_INSPECTOR, GtkWidget)

GtkWidget  *fb_node_inspector_new        (void);
/* note (may be NULL) says how the node differs from the other stage ("Added by fuse-epilogue"). */
void        fb_node_inspector_show_node  (FbNodeInspector *self,
                                          FbGraph         *graph,
                                          const FbNode    *node,
                                          const char      *note);
/* The "Kernel" section of the node on show: summary says which kernel carries its work, or why
 * none does; action_name (may be NULL) is what its "Show Kernel" button activates. Replaces what
 * an earlier call put there; a node shown after drops it. */
void        fb_node_inspector_set_kernel (FbNodeInspector *self,
                                          const char      *summary,
                                          const char      *action_name);
/* The summary of the "Kernel" section, or NULL when there is none. */
const char *fb_node_inspector_get_kernel_summary (FbNodeInspector *self);
/* An initializer, or a value a pass folded: a constant no node of graph makes. note as above. */
void        fb_node_inspector_show_constant (FbNodeInspector *self,
                                             FbGraph         *graph,
                                             const FbValue   *value,
                                             const char      *note);
void        fb_node_inspector_show_group (FbNodeInspector    *self,
                                          const FbGraphGroup *group);
void        fb_node_inspector_clear      (FbNodeInspector *self);
/* What the pane shows at its top: the op, the group's name, or "" when empty. */
const char *fb_node_inspector_get_title  (FbNodeInspector *self);

G_END_DECLS
