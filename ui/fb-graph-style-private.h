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
#define FB_GRAPH_ROW_HEIGHT       16.0    /* one constant the node reads */
#define FB_GRAPH_ROW_MAX          8       /* lines of rows, the last "+N more" when there are more */
#define FB_GRAPH_ROW_VALUES       6       /* elements of a constant written out in its row */
#define FB_GRAPH_ROW_LABEL_MAX    0.45    /* of the text width: the most a row's label column takes */

/* The members of a FUSED node, or NULL. */
FbGraph *_fb_graph_fused_body      (const FbNode *node);
/* "MatMul", or "Fused · epilogue". */
char    *_fb_graph_node_title      (const FbNode *node);
/* "1x768x64"; "?" when unknown; "1x3 (+1)" when there are more outputs. */
char    *_fb_graph_node_shape_text (const FbNode *node);
char    *_fb_graph_value_text      (const FbValue *value);
/* rows: the constants the node shows (fb_graph_layout_node_rows). */
void     _fb_graph_node_size       (const FbNode        *node,
                                    const FbConstantRow *rows,
                                    guint                n_rows,
                                    double              *width,
                                    double              *height);
/* Below the top of a node's box: where its first constant row starts. */
double   _fb_graph_rows_top        (const FbNode *node);
/* How many of n_rows are drawn as rows (the rest are counted on a "+N more" line). */
guint    _fb_graph_rows_shown      (guint n_rows);
/* How many lines the rows take: the rows drawn, and "+N more". */
guint    _fb_graph_rows_lines      (guint n_rows);
/* fb-graph-slots.c: "W" for input 1 of a Conv; NULL when ONNX gives that input no single name. */
const char *_fb_graph_input_slot_name (FbOpKind op,
                                       guint    input);
void     _fb_graph_group_size      (const FbGraphGroup *group,
                                    double             *width,
                                    double             *height);

G_END_DECLS
