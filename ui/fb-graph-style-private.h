/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the layout and the drawing of the graph view must agree on: the size of every box and
 * the text it shows. Sizes come from character counts instead of measured text so that a layout
 * computed in a worker thread needs no font machinery and gives the same numbers everywhere. */
#pragma once

#include "fb-graph-layout.h"

G_BEGIN_DECLS

#define FB_GRAPH_NODE_HEIGHT      58.0    /* op, name, output shape */
#define FB_GRAPH_NODE_MIN_WIDTH   96.0
#define FB_GRAPH_NODE_MAX_WIDTH   224.0
#define FB_GRAPH_NODE_PAD         10.0    /* left and right text margin */
#define FB_GRAPH_TITLE_PX         12.0    /* op: bold */
#define FB_GRAPH_TEXT_PX          10.0    /* name, shape */
#define FB_GRAPH_TITLE_CHAR       7.6     /* average advance of a title character */
#define FB_GRAPH_TEXT_CHAR        6.2
#define FB_GRAPH_FRAME_HEADER     24.0    /* title bar of an expanded group */
#define FB_GRAPH_FRAME_PAD        10.0    /* margin around a group's content */
#define FB_GRAPH_FUSED_ROW        20.0    /* one member of a fused node */
#define FB_GRAPH_FUSED_MAX_ROWS   8       /* members drawn before "+N more" */
#define FB_GRAPH_RADIUS           6.0

/* The members of a FUSED node, or NULL. */
FbGraph *_fb_graph_fused_body      (const FbNode *node);
/* "MatMul", or "Fused · epilogue". */
char    *_fb_graph_node_title      (const FbNode *node);
/* "1x768x64"; "?" when unknown; "1x3 (+1)" when there are more outputs. */
char    *_fb_graph_node_shape_text (const FbNode *node);
char    *_fb_graph_value_text      (const FbValue *value);
void     _fb_graph_node_size       (const FbNode *node,
                                    double       *width,
                                    double       *height);
void     _fb_graph_group_size      (const FbGraphGroup *group,
                                    double             *width,
                                    double             *height);

G_END_DECLS
