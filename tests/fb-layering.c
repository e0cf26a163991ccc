/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The layering check of test-layering.c (fb-layering.h). */
#include "fb-layering.h"

#include <string.h>

/* The layers, lowest first, as DESIGN.md draws them: a folder uses only folders of a lower
 * rank. A target's folder (compiler/targets/NAME) is used by no other folder at all: everything
 * above reaches it through the backend table. */
static const struct {
  const char *folder;
  int         rank;
} layers[] = {
  { "compiler/ir", 0 },
  { "compiler/import", 1 },
  { "compiler/interp", 1 },
  { "compiler/export", 2 },
  { "compiler/passes", 2 },
  { "compiler/lower", 2 },
  { "compiler/codegen", 3 },
  { "compiler/runtime", 4 },
  { "compiler/targets", 5 },     /* the backend table */
  { "compiler/targets/", 5 },    /* every target's own folder */
  { "compiler/driver", 6 },
  { "profiler", 7 },
  { "ui", 8 },
  { "app", 9 },
};

static const char *const roots[] = { "compiler", "profiler", "ui", "app" };

/* The layer dir belongs to: a target's folder (compiler/targets/NAME), or the nearest folder
 * of the layers above it (profiler/c-compat is the profiler's). */
static char *
layer_folder (const char *dir)
{
  if (g_str_has_prefix (dir, "compiler/targets/"))
    {
      g_auto(GStrv) parts = g_strsplit (dir, "/", 4);
      return g_strdup_printf ("%s/%s/%s", parts[0], parts[1], parts[2]);
    }
  g_autofree char *d = g_strdup (dir);
  for (;;)
    {
      for (guint i = 0; i < G_N_ELEMENTS (layers); i++)
        if (g_str_equal (d, layers[i].folder))
          return g_steal_pointer (&d);
      char *slash = strrchr (d, '/');
      if (slash == NULL)
        return g_steal_pointer (&d);
      *slash = '\0';
    }
}

static gboolean
is_target_folder (const char *folder)
{
  return g_str_has_prefix (folder, "compiler/targets/");
}

/* The rank of folder (relative to the top), or -1 for one outside the layers. */
static int
rank_of (const char *folder)
{
  for (guint i = 0; i < G_N_ELEMENTS (layers); i++)
    if (g_str_equal (folder, layers[i].folder) ||
        (g_str_has_suffix (layers[i].folder, "/") && g_str_has_prefix (folder, layers[i].folder)))
      return layers[i].rank;
  return -1;
}

gboolean
fb_layering_allowed (const char *from, const char *to)
{
  if (g_str_equal (from, to))
    return TRUE;
  if (is_target_folder (to))
    return FALSE;
  int f = rank_of (from), t = rank_of (to);
  return f >= 0 && t >= 0 && t < f;
}

typedef struct {
  char *path;      /* relative to the top */
  char *folder;
  char *text;      /* comments blanked out */
} Source;

static void
source_free (Source *s)
{
  g_free (s->path);
  g_free (s->folder);
  g_free (s->text);
  g_free (s);
}

/* text with every comment replaced by spaces (line breaks kept), strings left as they are. */
static char *
strip_comments (const char *text)
{
  char *out = g_strdup (text);
  gboolean in_string = FALSE;
  for (char *p = out; *p; p++)
    {
      if (in_string)
        {
          if (*p == '\\' && p[1])
            p++;
          else if (*p == '"')
            in_string = FALSE;
        }
      else if (*p == '"' && (p == out || p[-1] != '\''))
        in_string = TRUE;
      else if (p[0] == '/' && p[1] == '/')
        for (; *p && *p != '\n'; p++)
          *p = ' ';
      else if (p[0] == '/' && p[1] == '*')
        {
          char *end = strstr (p + 2, "*/");
          char *stop = end ? end + 2 : p + strlen (p);
          for (; p < stop; p++)
            if (*p != '\n')
              *p = ' ';
          p--;
        }
    }
  return out;
}

static void
collect (const char *top, const char *dir, GPtrArray *sources)
{
  g_autofree char *path = g_build_filename (top, dir, NULL);
  g_autoptr(GDir) d = g_dir_open (path, 0, NULL);
  const char *name;
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *rel = g_build_filename (dir, name, NULL);
      g_autofree char *full = g_build_filename (top, rel, NULL);
      if (g_file_test (full, G_FILE_TEST_IS_DIR))
        collect (top, rel, sources);
      else if (g_str_has_suffix (name, ".c") || g_str_has_suffix (name, ".h"))
        {
          g_autofree char *text = NULL;
          if (!g_file_get_contents (full, &text, NULL, NULL))
            continue;
          Source *s = g_new0 (Source, 1);
          s->path = g_strdup (rel);
          s->folder = layer_folder (dir);
          s->text = strip_comments (text);
          g_ptr_array_add (sources, s);
        }
    }
}

static guint
line_of (const char *text, const char *at)
{
  guint line = 1;
  for (const char *p = text; p < at; p++)
    line += *p == '\n';
  return line;
}

/* Header file name -> its folder; function declared in a header -> the header's folder
 * (names declared in headers of two folders are left out). */
static void
index_headers (GPtrArray *sources, GHashTable *header_folder, GHashTable *function_folder)
{
  g_autoptr(GRegex) decl = g_regex_new ("^[A-Za-z_][^#;{}=]*?\\b(_?fb_[a-z0-9_]+)\\s*\\(",
                                        G_REGEX_MULTILINE, 0, NULL);
  g_autoptr(GHashTable) ambiguous = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < sources->len; i++)
    {
      Source *s = g_ptr_array_index (sources, i);
      if (!g_str_has_suffix (s->path, ".h"))
        continue;
      g_hash_table_insert (header_folder, g_path_get_basename (s->path), s->folder);
      g_autoptr(GMatchInfo) m = NULL;
      for (g_regex_match (decl, s->text, 0, &m); g_match_info_matches (m);
           g_match_info_next (m, NULL))
        {
          g_autofree char *name = g_match_info_fetch (m, 1);
          const char *known = g_hash_table_lookup (function_folder, name);
          if (known != NULL && !g_str_equal (known, s->folder))
            g_hash_table_add (ambiguous, g_strdup (name));
          else
            g_hash_table_insert (function_folder, g_strdup (name), s->folder);
        }
    }
  GHashTableIter it;
  gpointer name;
  g_hash_table_iter_init (&it, ambiguous);
  while (g_hash_table_iter_next (&it, &name, NULL))
    g_hash_table_remove (function_folder, name);
}

/* The names of the targets, from the backend table's list (FB_TARGET (NAME) lines). */
static GPtrArray *
target_names (const char *top)
{
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *path = g_build_filename (top, "compiler", "targets", "fb-targets.def", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return names;
  g_autoptr(GRegex) entry = g_regex_new ("^FB_TARGET \\((\\w+)\\)", G_REGEX_MULTILINE, 0, NULL);
  g_autoptr(GMatchInfo) m = NULL;
  for (g_regex_match (entry, text, 0, &m); g_match_info_matches (m); g_match_info_next (m, NULL))
    g_ptr_array_add (names, g_match_info_fetch (m, 1));
  return names;
}

static void
check_includes (Source *s, GHashTable *header_folder, GPtrArray *violations)
{
  g_autoptr(GRegex) include = g_regex_new ("^\\s*#\\s*include\\s+\"([^\"]+)\"", G_REGEX_MULTILINE,
                                           0, NULL);
  g_autoptr(GMatchInfo) m = NULL;
  for (g_regex_match (include, s->text, 0, &m); g_match_info_matches (m);
       g_match_info_next (m, NULL))
    {
      g_autofree char *header = g_match_info_fetch (m, 1);
      g_autofree char *base = g_path_get_basename (header);
      const char *folder = g_hash_table_lookup (header_folder, base);
      int start;
      g_match_info_fetch_pos (m, 0, &start, NULL);
      if (folder != NULL && !fb_layering_allowed (s->folder, folder))
        g_ptr_array_add (violations,
                         g_strdup_printf ("%s:%u: includes %s of %s", s->path,
                                          line_of (s->text, s->text + start), header, folder));
    }
}

static void
check_calls (Source *s, GHashTable *function_folder, GPtrArray *violations)
{
  g_autoptr(GRegex) call = g_regex_new ("\\b(_?fb_[a-z0-9_]+)\\s*\\(", 0, 0, NULL);
  g_autoptr(GMatchInfo) m = NULL;
  for (g_regex_match (call, s->text, 0, &m); g_match_info_matches (m);
       g_match_info_next (m, NULL))
    {
      g_autofree char *name = g_match_info_fetch (m, 1);
      const char *folder = g_hash_table_lookup (function_folder, name);
      int start;
      g_match_info_fetch_pos (m, 1, &start, NULL);
      if (folder != NULL && !fb_layering_allowed (s->folder, folder))
        g_ptr_array_add (violations,
                         g_strdup_printf ("%s:%u: calls %s of %s", s->path,
                                          line_of (s->text, s->text + start), name, folder));
    }
}

/* Outside the targets' folders and the table, a target's name in a comparison or a lookup
 * ("cuda" == target) is a branch on a target the backend table should answer. */
static void
check_target_names (Source *s, GPtrArray *targets, GPtrArray *violations)
{
  static const char *const compares[] = { "g_str_equal", "g_strcmp0", "strcmp", "strncmp",
                                          "g_str_has_prefix", "fb_backend_lookup" };
  if (g_str_has_prefix (s->folder, "compiler/targets"))
    return;
  g_auto(GStrv) lines = g_strsplit (s->text, "\n", -1);
  for (guint l = 0; lines[l] != NULL; l++)
    {
      gboolean compares_here = FALSE;
      for (guint c = 0; c < G_N_ELEMENTS (compares) && !compares_here; c++)
        compares_here = strstr (lines[l], compares[c]) != NULL;
      for (guint t = 0; compares_here && t < targets->len; t++)
        {
          g_autofree char *quoted = g_strdup_printf ("\"%s\"", (char *) targets->pdata[t]);
          if (strstr (lines[l], quoted) != NULL)
            g_ptr_array_add (violations,
                             g_strdup_printf ("%s:%u: compares the target name %s", s->path,
                                              l + 1, quoted));
        }
    }
}

GPtrArray *
fb_layering_check (const char *top)
{
  g_autoptr(GPtrArray) sources = g_ptr_array_new_with_free_func ((GDestroyNotify) source_free);
  g_autoptr(GHashTable) header_folder = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                               NULL);
  g_autoptr(GHashTable) function_folder = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                                 NULL);
  g_autoptr(GPtrArray) targets = target_names (top);
  GPtrArray *violations = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < G_N_ELEMENTS (roots); i++)
    collect (top, roots[i], sources);
  index_headers (sources, header_folder, function_folder);
  for (guint i = 0; i < sources->len; i++)
    {
      Source *s = g_ptr_array_index (sources, i);
      check_includes (s, header_folder, violations);
      check_calls (s, function_folder, violations);
      check_target_names (s, targets, violations);
    }
  return violations;
}
