/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-config.h"
#include "fb-application.h"
#include "fb-ui.h"
#include "fb-window.h"

struct _FbApplication {
  AdwApplication  parent_instance;

  GSettings      *settings;   /* NULL without the schema */
  GStrv           recent;     /* URIs, newest first, when there are no settings */
  GMenu          *recent_menu;
  GFile          *profile;    /* --profile FILE: painted on the model the window opens */
};

G_DEFINE_FINAL_TYPE (FbApplication, fb_application, ADW_TYPE_APPLICATION)

FbApplication *
fb_application_new (GApplicationFlags flags)
{
  return g_object_new (FB_TYPE_APPLICATION,
                       "application-id", FB_APP_ID,
                       "flags", flags | G_APPLICATION_HANDLES_OPEN,
                       "resource-base-path", FB_RESOURCE_PATH,
                       NULL);
}

int
fb_application_run (int    argc,
                    char **argv)
{
  g_autoptr(FbApplication) app = fb_application_new (G_APPLICATION_DEFAULT_FLAGS);

  g_set_application_name ("Fusebench");
  return g_application_run (G_APPLICATION (app), argc, argv);
}

GSettings *
fb_application_get_settings (FbApplication *self)
{
  g_return_val_if_fail (FB_IS_APPLICATION (self), NULL);
  return self->settings;
}

const char * const *
fb_application_get_recent (FbApplication *self)
{
  g_return_val_if_fail (FB_IS_APPLICATION (self), NULL);

  if (self->settings != NULL)
    {
      g_strfreev (self->recent);
      self->recent = g_settings_get_strv (self->settings, "recent-files");
    }
  return (const char * const *) self->recent;
}

static void
rebuild_recent_menu (FbApplication *self)
{
  const char * const *recent = fb_application_get_recent (self);

  g_menu_remove_all (self->recent_menu);
  for (guint i = 0; recent[i] != NULL; i++)
    {
      g_autoptr(GFile) file = g_file_new_for_uri (recent[i]);
      g_autofree char *label = g_file_get_basename (file);
      g_autoptr(GMenuItem) item = g_menu_item_new (label, NULL);

      g_menu_item_set_action_and_target_value (item, "win.open-uri", g_variant_new_string (recent[i]));
      g_menu_append_item (self->recent_menu, item);
    }
}

void
fb_application_add_recent (FbApplication *self,
                           GFile         *file)
{
  g_autofree char *uri = NULL;
  const char * const *old;
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) recent = NULL;
  guint n = 1;

  g_return_if_fail (FB_IS_APPLICATION (self));
  g_return_if_fail (G_IS_FILE (file));

  uri = g_file_get_uri (file);
  old = fb_application_get_recent (self);
  g_strv_builder_add (builder, uri);
  for (guint i = 0; old[i] != NULL && n < FB_RECENT_MAX; i++)
    if (g_strcmp0 (old[i], uri) != 0)
      {
        g_strv_builder_add (builder, old[i]);
        n++;
      }
  recent = g_strv_builder_end (builder);
  if (self->settings != NULL)
    g_settings_set_strv (self->settings, "recent-files", (const char * const *) recent);
  g_strfreev (self->recent);
  self->recent = g_steal_pointer (&recent);
  rebuild_recent_menu (self);
}

GMenuModel *
fb_application_get_recent_menu (FbApplication *self)
{
  g_return_val_if_fail (FB_IS_APPLICATION (self), NULL);
  return G_MENU_MODEL (self->recent_menu);
}

static void
about_action (GSimpleAction *action,
              GVariant      *parameter,
              gpointer       user_data)
{
  GtkApplication *app = GTK_APPLICATION (user_data);
  const char *developers[] = { "The Fusebench authors", NULL };
  GtkWidget *about;

  about = g_object_new (ADW_TYPE_ABOUT_WINDOW,
                        "transient-for", gtk_application_get_active_window (app),
                        "application-name", "Fusebench",
                        "application-icon", FB_APP_ID,
                        "developer-name", "The Fusebench authors",
                        "developers", developers,
                        "version", FB_VERSION,
                        "comments", "A workbench for making neural networks run fast: see every "
                                    "compiler pass change the graph, switch passes, fusions and "
                                    "layouts, and see where the time goes.",
                        "license-type", GTK_LICENSE_GPL_3_0,
                        "copyright", "© The Fusebench authors",
                        NULL);
  gtk_window_present (GTK_WINDOW (about));
}

static void
quit_action (GSimpleAction *action,
             GVariant      *parameter,
             gpointer       user_data)
{
  GtkApplication *app = GTK_APPLICATION (user_data);
  GList *windows;

  /* Closing each window first lets them cancel their workers. */
  while ((windows = gtk_application_get_windows (app)) != NULL)
    gtk_window_destroy (windows->data);
  g_application_quit (G_APPLICATION (app));
}

static const GActionEntry app_actions[] = {
  { .name = "about", .activate = about_action },
  { .name = "quit",  .activate = quit_action },
};

static void
fb_application_startup (GApplication *application)
{
  FbApplication *self = FB_APPLICATION (application);
  GtkApplication *app = GTK_APPLICATION (application);
  GSettingsSchemaSource *source;
  g_autoptr(GSettingsSchema) schema = NULL;

  G_APPLICATION_CLASS (fb_application_parent_class)->startup (application);

  fb_ui_init ();
  /* Without an installed schema (running from a build folder) nothing is remembered, and that
   * is fine: the workbench works the same. */
  if ((source = g_settings_schema_source_get_default ()) != NULL
      && (schema = g_settings_schema_source_lookup (source, FB_APP_ID, TRUE)) != NULL)
    self->settings = g_settings_new_full (schema, NULL, NULL);
  rebuild_recent_menu (self);

  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions, G_N_ELEMENTS (app_actions), app);
  gtk_application_set_accels_for_action (app, "app.quit", (const char *[]) { "<Control>q", NULL });
}

/* `fusebench MODEL --profile FILE`: a profile made elsewhere (on a GPU server, say), opened
 * with the model; the window checks that it fits before painting it. */
static int
fb_application_handle_local_options (GApplication *application,
                                     GVariantDict *options)
{
  FbApplication *self = FB_APPLICATION (application);
  g_autofree char *path = NULL;

  if (g_variant_dict_lookup (options, "profile", "^ay", &path))
    {
      g_clear_object (&self->profile);
      self->profile = g_file_new_for_commandline_arg (path);
    }
  return -1;
}

static void
open_profile_in (FbApplication *self,
                 FbWindow      *window)
{
  if (self->profile != NULL)
    fb_window_open_profile (window, self->profile);
}

static void
fb_application_activate (GApplication *application)
{
  FbWindow *window = fb_window_new (FB_APPLICATION (application));

  gtk_window_present (GTK_WINDOW (window));
  fb_window_open_sample (window);
  open_profile_in (FB_APPLICATION (application), window);
}

static void
fb_application_open (GApplication  *application,
                     GFile        **files,
                     int            n_files,
                     const char    *hint)
{
  for (int i = 0; i < n_files; i++)
    {
      FbWindow *window = fb_window_new (FB_APPLICATION (application));

      gtk_window_present (GTK_WINDOW (window));
      fb_window_open_file (window, files[i]);
      open_profile_in (FB_APPLICATION (application), window);
    }
}

static void
fb_application_finalize (GObject *object)
{
  FbApplication *self = FB_APPLICATION (object);

  g_clear_object (&self->settings);
  g_clear_object (&self->recent_menu);
  g_clear_object (&self->profile);
  g_strfreev (self->recent);

  G_OBJECT_CLASS (fb_application_parent_class)->finalize (object);
}

static void
fb_application_class_init (FbApplicationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  object_class->finalize = fb_application_finalize;
  app_class->startup = fb_application_startup;
  app_class->activate = fb_application_activate;
  app_class->handle_local_options = fb_application_handle_local_options;
  app_class->open = fb_application_open;
}

static void
fb_application_init (FbApplication *self)
{
  self->recent = g_new0 (char *, 1);
  self->recent_menu = g_menu_new ();
  g_application_add_main_option (G_APPLICATION (self), "profile", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_FILENAME,
                                 "Paint a profile (made with “fusebench profile”, here or elsewhere) on the model",
                                 "FILE");
}
