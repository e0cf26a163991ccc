/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-ui.h"
#include "fb-code-view.h"
#include "fb-compare-view.h"
#include "fb-graph-view.h"
#include "fb-node-inspector.h"
#include "fb-profile-panel.h"
#include "fb-resources.h"
#include "fb-stage-list.h"
#include "fb-stage-row.h"

#include <adwaita.h>

void
fb_ui_init (void)
{
  static gsize initialized;
  g_autoptr(GBytes) css = NULL;

  if (!g_once_init_enter (&initialized))
    return;
  /* The views follow the light or dark style through libadwaita. */
  adw_init ();
  /* The resource lives in a static library: referring to it is what links it in, and the
   * constructor generated with it has registered it where the compiler supports those. */
  css = g_resources_lookup_data (FB_RESOURCE_PATH "/style.css", G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
  if (css == NULL)
    g_resources_register (fb_get_resource ());
  g_type_ensure (FB_TYPE_CODE_VIEW);
  g_type_ensure (FB_TYPE_COMPARE_VIEW);
  g_type_ensure (FB_TYPE_GRAPH_VIEW);
  g_type_ensure (FB_TYPE_NODE_INSPECTOR);
  g_type_ensure (FB_TYPE_PROFILE_PANEL);
  g_type_ensure (FB_TYPE_STAGE_LIST);
  g_type_ensure (FB_TYPE_STAGE_ROW);
  g_once_init_leave (&initialized, 1);
}
