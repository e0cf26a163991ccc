/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A profile painted on a graph view: each node's attributed cost (fb_profile_attribute on the
 * view's graph, whatever stage it is) as a heat colour and a badge, a legend that says what the
 * colour means and whether it was measured or modeled, and, given the profile before, each
 * node's change in time against it (A/B). Collapsed groups carry the sum of their nodes.
 *
 * The overlay is per view: the view attributes the profile to the graph it shows, again when it
 * is given another stage. */
#pragma once

#include "fb-graph-view.h"
#include "fb-profile.h"

G_BEGIN_DECLS

typedef enum {
  FB_PROFILE_METRIC_TIME,        /* median time per inference (measured) */
  FB_PROFILE_METRIC_SHARE,       /* share of the profile's kernel time (measured) */
  FB_PROFILE_METRIC_BYTES,       /* bytes read and written (modeled or measured) */
  FB_PROFILE_METRIC_BANDWIDTH,   /* achieved GB/s, or GFLOP/s for compute-bound nodes */
  FB_PROFILE_METRIC_ROOFLINE,    /* achieved share of the roofline at the node's intensity */
  FB_PROFILE_N_METRICS
} FbProfileMetric;

/* "time", "share", "bytes", "bandwidth", "roofline": the settings' nicks. */
const char     *fb_profile_metric_nick          (FbProfileMetric metric);
FbProfileMetric fb_profile_metric_from_nick     (const char     *nick);
/* "Time", "Share of Time", ... as the metric selector shows them. */
const char     *fb_profile_metric_label         (FbProfileMetric metric);

/* Paints profile on view (NULL: nothing); previous (may be NULL) is the profile to show each
 * node's change in time against. */
void            fb_graph_view_set_profile       (FbGraphView     *self,
                                                 FbProfile       *profile,
                                                 FbProfile       *previous);
FbProfile      *fb_graph_view_get_profile       (FbGraphView     *self);
FbProfile      *fb_graph_view_get_previous_profile (FbGraphView  *self);
void            fb_graph_view_set_profile_metric(FbGraphView     *self,
                                                 FbProfileMetric  metric);
FbProfileMetric fb_graph_view_get_profile_metric(FbGraphView     *self);
/* The cost painted on node of the view's graph, or NULL when it has none (or no profile). */
const FbNodeCost *fb_graph_view_get_node_cost   (FbGraphView     *self,
                                                 const FbNode    *node);
/* With a previous profile: node's time now minus its time then, through provenance (so that it
 * works between different pipelines); FALSE when there is no previous profile or the node has
 * no time in either. */
gboolean        fb_graph_view_get_node_delta    (FbGraphView     *self,
                                                 const FbNode    *node,
                                                 double          *delta_us,
                                                 double          *before_us);
/* Node boxes drawn with a heat colour, and badges, since the profile or the metric was last set:
 * what tests check that painting happened. */
guint           fb_graph_view_get_n_painted     (FbGraphView     *self,
                                                 guint           *n_badges);
/* What the legend says for the current metric ("Share of time · measured"), or NULL. */
char           *fb_graph_view_describe_overlay  (FbGraphView     *self);

G_END_DECLS
