/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The rewrite engine: rule tables of (pattern, rewrite) run to a fixed point.
 *
 * A pattern is a small tree written as data: "a Mul whose operands are x and a constant 1",
 * "x * 0.5 * (1 + Tanh(...))". Operands of commutative operators match in either order, and a
 * capture slot that appears twice must bind the same value both times (that is how LayerNorm's
 * x - mean, read by both the variance and the division, is recognised). The rewrite half is a
 * C function that gets the captures and builds the replacement with the helpers below. Each
 * rule has a name; the engine counts how often each fired, which the stage summary shows. */
#pragma once

#include "fb-pass-private.h"

G_BEGIN_DECLS

#define FB_PAT_MAX_BINDS 12
#define FB_PAT_MAX_NODES 24

typedef enum {
  FB_PAT_ANY,        /* any value (binds it when bind is set) */
  FB_PAT_CONST,      /* a constant whose elements all equal value */
  FB_PAT_CONST_ANY,  /* any constant */
  FB_PAT_OP,         /* the first output of a node of op whose leading inputs match src */
} FbPatKind;

typedef struct _FbPat FbPat;
struct _FbPat {
  FbPatKind    kind;
  FbOpKind     op;          /* FB_PAT_OP */
  double       value;       /* FB_PAT_CONST */
  guint        bind;        /* capture slot 1..FB_PAT_MAX_BINDS-1, 0 for none */
  const FbPat *src[4];      /* FB_PAT_OP: NULL-terminated; further node inputs are free */
};

/* Pattern constructors for rule tables (compound literals with static storage). */
#define FB_P_ANY(slot)        (&(const FbPat) { .kind = FB_PAT_ANY, .bind = (slot) })
#define FB_P_CONST(v)         (&(const FbPat) { .kind = FB_PAT_CONST, .value = (v) })
#define FB_P_CONST_ANY(slot)  (&(const FbPat) { .kind = FB_PAT_CONST_ANY, .bind = (slot) })
#define FB_P_OP(o, ...)       (&(const FbPat) { .kind = FB_PAT_OP, .op = FB_OP_##o, \
                                                .src = { __VA_ARGS__ } })
#define FB_P_OPB(slot, o, ...) (&(const FbPat) { .kind = FB_PAT_OP, .op = FB_OP_##o, \
                                                 .bind = (slot), .src = { __VA_ARGS__ } })

typedef struct {
  FbValue *v[FB_PAT_MAX_BINDS];        /* captured values by slot */
  FbNode  *nodes[FB_PAT_MAX_NODES];    /* every node the pattern matched, root first */
  guint    n_nodes;
} FbMatch;

typedef enum {
  FB_RULE_SHARED_OK = 1 << 0,   /* matched inner nodes may have readers outside the match */
  FB_RULE_FUSES     = 1 << 1,   /* collapses several nodes into one: respects --no-fuse */
} FbRuleFlags;

typedef struct _FbRewriter FbRewriter;

typedef struct {
  const char  *name;
  guint        flags;                  /* FbRuleFlags */
  const FbPat *patterns[8];            /* alternatives, NULL-terminated; roots are FB_PAT_OP */
  /* Builds the replacement of root; FALSE when a condition the pattern cannot say fails. */
  gboolean   (*rewrite) (FbRewriter *rw, FbNode *root, const FbMatch *m);
} FbRule;

/* Runs rules over graph until none fires (or a sweep limit); fired[i] counts rule i. */
gboolean fb_rewrite_run            (FbPassContext *ctx, FbGraph *graph, const FbRule *rules,
                                    guint n_rules, guint *fired, GError **error);

/* ---- for rewrite functions ---------------------------------------------------------------- */

FbGraph *fb_rewrite_graph          (FbRewriter *rw);
/* Replaces the root by new_node: new_node takes the root's outputs (same values, same ids), and
 * inherits the provenance of every matched node. */
void     fb_rewrite_replace_root   (FbRewriter *rw, const FbMatch *m, FbNode *new_node);
/* Replaces every use of the root's output by value (which must be able to stand in for it). */
gboolean fb_rewrite_forward        (FbRewriter *rw, const FbMatch *m, FbValue *value);
/* A new node of op reading inputs, named after the root; the caller sets attributes. */
FbNode  *fb_rewrite_node           (FbRewriter *rw, FbOpKind op, const FbNode *root,
                                    FbValue *const *inputs, guint n_inputs, guint n_outputs);
/* A new value computed by node's output k (for inner nodes of a replacement). */
FbValue *fb_rewrite_output         (FbRewriter *rw, FbNode *node, guint k);
/* The one node that reads value, as the graph stood when this sweep began; NULL when value has
 * no reader, several, or is a graph output. */
FbNode  *fb_rewrite_sole_reader    (FbRewriter *rw, const FbValue *value);
/* Records shape inference of a new node; errors end the pass. */
gboolean fb_rewrite_infer          (FbRewriter *rw, FbNode *node);

G_END_DECLS
