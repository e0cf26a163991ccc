/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shared by the files that make up FbWindow. */
#pragma once

#include "fb-code-view.h"
#include "fb-profile-panel.h"
#include "fb-window.h"

G_BEGIN_DECLS

struct _FbWindow {
  AdwApplicationWindow  parent_instance;

  /* Template widgets. */
  AdwToastOverlay      *toast_overlay;
  AdwWindowTitle       *window_title;
  GtkMenuButton        *menu_button;
  GtkRevealer          *progress_revealer;
  GtkProgressBar       *progress_bar;
  GtkLabel             *progress_label;
  GtkSearchBar         *search_bar;
  GtkSearchEntry       *search_entry;
  GtkLabel             *search_status;
  GtkStack             *main_stack;
  AdwStatusPage        *error_page;
  FbStageList          *stage_list;
  FbCompareView        *compare_view;
  FbNodeInspector      *inspector;
  GtkPaned             *inner_paned;     /* the graphs' column beside the inspector */
  GtkPaned             *code_paned;
  GtkPaned             *profile_paned;   /* the graphs over the profile panel */
  FbCodeView         *code_view;
  GMenu                *recent_section;

  /* The model and what the pipeline made of it. */
  FbRunner             *runner;          /* the model's pipeline, re-run after every toggle */
  char                 *model_title;
  GFile                *model_file;      /* NULL for the bundled sample */
  FbRun                *run;             /* the stages on screen, alive whatever a run replaces */
  FbPipelineOptions    *options;

  /* The kernel of the selected node (fb-window-kernel.c). */
  FbLowering           *lowering;        /* of the final stage on screen, made on first use */
  GArray               *kernel_ids;      /* final-stage node ids that carry the selection's work,
                                            NULL when no node is selected */
  char                 *kernel_note;     /* how the selection got there, or why nothing does */

  /* The profile (fb-window-profile.c, fb-window-profile-run.c). */
  FbProfilePanel       *profile_panel;
  GtkBox               *profile_box;     /* the Profile button and its target selector */
  FbProfile            *profile;         /* the latest opened or made, or NULL */
  FbProfile            *previous_profile;/* the one before it: A/B */
  gboolean              profile_painted; /* profile fits the run on screen and is painted */
  gboolean              profile_pending; /* opened while a model loads: checked once it has run */
  gboolean              compare_previous;/* paint the change against previous_profile */
  gboolean              profile_selecting; /* a node is being selected from the panel */
  GCancellable         *profile_cancellable; /* non-NULL while a profile is being made */
  const FbBackend      *profile_target;  /* what the Profile button runs on */
  GPtrArray            *profile_target_buttons; /* GtkWidget*: its choices, one per target the
                                                   profiler instruments (weak: the popover
                                                   holds them) */
  GtkWidget            *profile_eager_button; /* the eager baseline preset */
  gboolean              profile_eager;   /* profiles launch kernel by kernel, fusions off */
  gboolean              attached;        /* took its application's settings and recent files */
  GtkFileChooserNative *profile_chooser;

  /* How the graphs and the panels share the window (fb-window-panes.c). */
  int                   panel_height;    /* the profile panel's height, open, as the user left
                                            it; -1: a third of the room under the graphs */
  int                   code_height;     /* the code view's; -1: a quarter of the column */
  int                   inspector_width; /* -1: its own */
  int                   code_total;      /* the column's height when the dividers were set */
  int                   code_applied;    /* the positions set then (-1: none) */
  int                   panel_total;
  int                   panel_applied;
  gboolean              panes_applying;  /* a divider is being set here, not dragged */
  guint                 panes_save_id;   /* the sizes are written when a drag rests */
  GSettings            *panes_settings;  /* NULL without the schema */

  /* Remote hosts (fb-window-remote.c). */
  GAction              *profile_host_action; /* win.profile-host: "" or a host */
  char                 *profile_host;    /* where Profile runs: NULL for this computer */
  GStrv                 remote_hosts;    /* the list without settings (else the settings') */
  GBytes               *remote_trace;    /* the Chrome trace made there with remote_profile */
  FbProfile            *remote_profile;  /* the profile it goes with (Export Chrome Trace
                                            writes remote_trace while it is the one shown) */
  char                 *remote_trace_host; /* where they were made */
  GtkBox               *hosts_box;       /* the menu's choices, rebuilt when the list changes */
  GtkWidget            *host_entry;      /* where a host is typed to add it */

  /* Work in flight. */
  GCancellable         *load_cancellable;
  GCancellable         *run_cancellable; /* non-NULL while a run is in flight: its worker owns
                                            the pipeline until on_run_done */
  gboolean              rerun_pending;   /* the options changed while a run was going */
  char                 *last_error;
  gboolean              disposed;
  GtkFileChooserNative *chooser;
  GtkWindow            *shapes_dialog;   /* Input Shapes, while it is open (weak) */
};

/* fb-window-actions.c */
void _fb_window_class_init_actions (GtkWidgetClass *widget_class);
void _fb_window_init_actions       (FbWindow       *self);
/* A native file chooser for opening one file with a filter of its kind (and one for all
 * files), kept in *slot while it is open; open is called with the file chosen. */
void _fb_window_choose_file        (FbWindow               *self,
                                    GtkFileChooserNative  **slot,
                                    const char             *title,
                                    const char             *filter_name,
                                    const char             *pattern,
                                    const char             *mime_type,
                                    void                  (*open) (FbWindow *self, GFile *file));

/* fb-window-panes.c */
void _fb_window_class_init_panes   (GtkWidgetClass *widget_class);
void _fb_window_init_panes         (FbWindow       *self);
/* Once the settings are known (NULL without them): the View toggles and the sizes kept. */
void _fb_window_attach_panes       (FbWindow       *self,
                                    GSettings      *settings);
void _fb_window_panes_dispose      (FbWindow       *self);

/* fb-window-export.c */
void        _fb_window_class_init_export (GtkWidgetClass *widget_class);
void        _fb_window_init_export       (FbWindow       *self);
/* What the progress bar says while an export runs, else NULL. */
const char *_fb_window_export_label      (FbWindow       *self);

/* fb-window-kernel.c */
void _fb_window_update_kernel      (FbWindow       *self,
                                    FbGraphView    *view,
                                    FbNode         *node);
void _fb_window_show_kernel        (FbWindow       *self);
void _fb_window_kernel_run_changed (FbWindow       *self);
void _fb_window_kernel_finalize    (FbWindow       *self);
void _fb_window_init_kernel        (FbWindow       *self);

/* fb-window-load.c */
void _fb_window_rerun              (FbWindow       *self);
void _fb_window_cancel             (FbWindow       *self);
void _fb_window_show_error         (FbWindow       *self,
                                    const char     *message);
void _fb_window_update_busy        (FbWindow       *self);
void _fb_window_init_drop          (FbWindow       *self);

/* fb-window-profile.c */
void  _fb_window_class_init_profile      (GtkWidgetClass *widget_class);
void  _fb_window_init_profile            (FbWindow       *self);
void  _fb_window_constructed_profile     (FbWindow       *self);
void  _fb_window_profile_finalize        (FbWindow       *self);
/* After a new run or a new model: paints the profile again, or says why it no longer fits. */
void  _fb_window_profile_run_changed     (FbWindow       *self);
/* Takes profile as the one on screen, the one before becoming the A/B reference. */
void  _fb_window_set_profile             (FbWindow       *self,
                                          FbProfile      *profile);
/* The inspector's line about node's cost (NULL without a painted profile); also shows the
 * node's kernel as selected in the panel. */
char *_fb_window_profile_describe_node   (FbWindow       *self,
                                          FbGraphView    *view,
                                          const FbNode   *node);

/* fb-window-profile-run.c */
void  _fb_window_class_init_profile_run  (GtkWidgetClass *widget_class);
void  _fb_window_init_profile_run        (FbWindow       *self);
/* Why backend cannot be profiled on this machine (no driver, no device); NULL where it can. */
const char *_fb_window_target_unavailable (const FbBackend *backend);


/* fb-window-load.c */
/* What the settings remember a model by: its URI, "sample" for the bundled one. */
char   *_fb_window_model_key             (FbWindow      *self);
/* The bundled sample model's bytes (what the window shows when model_file is NULL). */
GBytes *_fb_window_sample_bytes          (GError        **error);

/* fb-window-input-shapes.c */
void  _fb_window_class_init_input_shapes (GtkWidgetClass *widget_class);
/* A model was opened (its pins cleared): the pins remembered for it go into the options. */
void  _fb_window_input_shapes_model_changed (FbWindow    *self);
void  _fb_window_input_shapes_dispose    (FbWindow       *self);

/* fb-window-remote.c */
void  _fb_window_class_init_profile_remote (GtkWidgetClass *widget_class);
/* Appends the Machine section (this computer, the hosts, a host to add) to the Profile menu. */
void  _fb_window_init_profile_remote     (FbWindow       *self,
                                          GtkBox         *menu_box);
/* Once the settings are known: the hosts and win.profile-host. */
void  _fb_window_attach_profile_remote   (FbWindow       *self);
/* A model was opened: where it was last profiled becomes where Profile runs. */
void  _fb_window_remote_model_changed    (FbWindow       *self);
/* Profile was pressed: where it runs is remembered for the model. */
void  _fb_window_remember_host           (FbWindow       *self);
/* Profiles the run on screen on profile_host, as win.profile does here. */
void  _fb_window_profile_remote          (FbWindow       *self);
void  _fb_window_remote_finalize         (FbWindow       *self);
/* Asks again for the hosts' devices and redraws the menu's hosts and the CUDA choice. */
void  _fb_window_remote_hosts_refresh    (FbWindow       *self);

/* fb-window-host-probe.c */
typedef enum {
  FB_HOST_PROBE_ASKING,   /* in a worker now */
  FB_HOST_PROBE_DONE,     /* *line is the device, *has_gpu says whether cuda can run there */
  FB_HOST_PROBE_FAILED,   /* *line says why the host could not be asked */
} FbHostProbeState;
/* What is known of host's device, asking it in the background when nothing is yet (or, with
 * retry, when asking failed): the windows' hosts are refreshed when the answer comes. *line is
 * borrowed until the next call. */
FbHostProbeState _fb_window_host_probe   (FbWindow       *self,
                                          const char     *host,
                                          gboolean        retry,
                                          const char    **line,
                                          gboolean       *has_gpu);
/* The Chrome trace that came back with the profile on screen, and the host it was made on
 * (*host borrowed); NULL for a profile made here or opened. */
GBytes *_fb_window_remote_trace          (FbWindow       *self,
                                          const char    **host);

G_END_DECLS
