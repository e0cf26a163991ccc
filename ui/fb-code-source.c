/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-code-source-private.h"

#include <adwaita.h>

#define LANGUAGE_SPECS "resource:///io/github/fusebench/Fusebench/language-specs"

/* A manager of our own: the default one's search path is fixed once anything loaded a
 * language, and ours must also look into the GResource. */
static GtkSourceLanguageManager *
language_manager (void)
{
  static GtkSourceLanguageManager *manager;

  if (g_once_init_enter (&manager))
    {
      GtkSourceLanguageManager *m = gtk_source_language_manager_new ();
      gtk_source_language_manager_append_search_path (m, LANGUAGE_SPECS);
      g_once_init_leave (&manager, m);
    }
  return manager;
}

static void
follow_dark (AdwStyleManager *style, GParamSpec *pspec, GtkSourceBuffer *buffer)
{
  GtkSourceStyleSchemeManager *schemes = gtk_source_style_scheme_manager_get_default ();
  const char *id = adw_style_manager_get_dark (style) ? "Adwaita-dark" : "Adwaita";

  gtk_source_buffer_set_style_scheme (buffer, gtk_source_style_scheme_manager_get_scheme (schemes, id));
}

static void
set_language (GtkTextView *view, const char *language_id)
{
  GtkSourceBuffer *buffer = GTK_SOURCE_BUFFER (gtk_text_view_get_buffer (view));
  GtkSourceLanguage *language = gtk_source_language_manager_get_language (language_manager (),
                                                                          language_id);

  if (language == NULL)
    g_warning ("no GtkSourceView language '%s': the code is shown without highlighting",
               language_id);
  gtk_source_buffer_set_language (buffer, language);
  gtk_source_buffer_set_highlight_syntax (buffer, language != NULL);
}

void
_fb_code_source_setup (GtkTextView *view, const char *language_id)
{
  GtkSourceBuffer *buffer;
  AdwStyleManager *style = adw_style_manager_get_default ();
  GtkSourceSearchContext *search;

  g_assert (GTK_SOURCE_IS_VIEW (view));
  buffer = GTK_SOURCE_BUFFER (gtk_text_view_get_buffer (view));
  set_language (view, language_id);
  follow_dark (style, NULL, buffer);
  g_signal_connect_object (style, "notify::dark", G_CALLBACK (follow_dark), buffer, 0);
  gtk_text_buffer_create_tag (GTK_TEXT_BUFFER (buffer), FB_CODE_MARK_TAG,
                              "paragraph-background", "rgba(246,211,45,0.35)", NULL);
  search = gtk_source_search_context_new (buffer, NULL);
  gtk_source_search_context_set_highlight (search, TRUE);
  gtk_source_search_settings_set_wrap_around (gtk_source_search_context_get_settings (search), TRUE);
  g_object_set_data_full (G_OBJECT (view), "fb-search", search, g_object_unref);
}

const char *
_fb_code_source_language (GtkTextView *view)
{
  GtkSourceLanguage *language =
    gtk_source_buffer_get_language (GTK_SOURCE_BUFFER (gtk_text_view_get_buffer (view)));

  return language != NULL ? gtk_source_language_get_id (language) : NULL;
}

int
_fb_code_source_search (GtkTextView *view, const char *text, gboolean forward)
{
  GtkSourceSearchContext *search = g_object_get_data (G_OBJECT (view), "fb-search");
  GtkSourceSearchSettings *settings = gtk_source_search_context_get_settings (search);
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (view);
  GtkTextIter start, end, match_start, match_end;
  gboolean wrapped;

  gtk_source_search_settings_set_search_text (settings, text != NULL && *text ? text : NULL);
  if (text == NULL || *text == '\0')
    return 0;
  gtk_text_buffer_get_selection_bounds (buffer, &start, &end);
  if (forward ? gtk_source_search_context_forward (search, &end, &match_start, &match_end, &wrapped)
              : gtk_source_search_context_backward (search, &start, &match_start, &match_end, &wrapped))
    {
      gtk_text_buffer_select_range (buffer, &match_start, &match_end);
      gtk_text_view_scroll_to_iter (view, &match_start, 0.1, FALSE, 0, 0);
    }
  return gtk_source_search_context_get_occurrences_count (search);
}

guint
_fb_code_source_mark_lines (GtkTextView *view, GArray *marks)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (view);
  GtkTextIter start, end;
  guint marked = 0;
  int n_lines = gtk_text_buffer_get_line_count (buffer);

  gtk_text_buffer_get_bounds (buffer, &start, &end);
  gtk_text_buffer_remove_tag_by_name (buffer, FB_CODE_MARK_TAG, &start, &end);
  for (int line = 0; marks != NULL && line < n_lines && (guint) line < marks->len; line++)
    {
      GtkTextIter a, b;

      if (!g_array_index (marks, gboolean, line))
        continue;
      gtk_text_buffer_get_iter_at_line (buffer, &a, line);
      b = a;
      gtk_text_iter_forward_line (&b);
      gtk_text_buffer_apply_tag_by_name (buffer, FB_CODE_MARK_TAG, &a, &b);
      marked++;
    }
  return marked;
}

GArray *
_fb_code_source_marked (GtkTextView *view)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (view);
  GtkTextTag *tag = gtk_text_tag_table_lookup (gtk_text_buffer_get_tag_table (buffer), FB_CODE_MARK_TAG);
  GArray *lines = g_array_new (FALSE, FALSE, sizeof (guint));

  for (int line = 0; line < gtk_text_buffer_get_line_count (buffer); line++)
    {
      GtkTextIter at;
      guint number = line + 1;

      gtk_text_buffer_get_iter_at_line (buffer, &at, line);
      if (gtk_text_iter_has_tag (&at, tag))
        g_array_append_val (lines, number);
    }
  return lines;
}
