/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The Flatpak manifest (flatpak/io.github.fusebench.Fusebench.json): well-formed as
 * flatpak-builder reads it, every source pinned (an archive by sha256, a git checkout by
 * commit), and its modules exactly what the meson.build files declare beyond the GNOME runtime,
 * built with the options meson.build needs. The dependencies are read from the meson.build
 * files themselves, so one added there without a module here (or a note in the table below of
 * what provides it) fails this test. Each check is also run on a broken copy of the manifest, to
 * show that it catches what it is there to catch. */
#include <json-glib/json-glib.h>

#include <stdlib.h>
#include <string.h>

#define RUNTIME "runtime"       /* org.gnome.Platform (and the SDK at build time) */
#define SDK     "sdk"           /* the SDK's toolchain: GCC, glibc, Python, GLib's tools */
#define ABSENT  "absent"        /* optional, and not in the Flatpak: the build goes without */

/* What provides, in the Flatpak, each dependency the meson.build files name. */
static const struct {
  const char *name;
  const char *provider;
} provided[] = {
  { "glib-2.0", RUNTIME },
  { "gio-2.0", RUNTIME },
  { "json-glib-1.0", RUNTIME },
  { "gtk4", RUNTIME },
  { "libadwaita-1", RUNTIME },
  { "cairo", RUNTIME },
  { "pangocairo", RUNTIME },
  { "gtksourceview-5", RUNTIME },
  { "threads", SDK },
  { "m", SDK },
  { "dl", SDK },
  { "openmp", SDK },              /* GCC's libgomp */
  { "python3", SDK },
  { "/usr/bin/python3", SDK },
  { "sh", SDK },
  { "glib-compile-schemas", SDK },
  { "desktop-file-validate", SDK },
  { "appstreamcli", SDK },
  { "cupti_activity.h", ABSENT }, /* the CUDA toolkit's: GPU timings unavailable without */
  { "libprotobuf-c", "protobuf-c" },
  { "protoc-c", "protobuf-c" },
  { "onnx.proto", "onnx-proto" },
  { "libcgraph", "graphviz" },
  { "libgvc", "graphviz" },
  { "openblas", "openblas" },
  { "dnnl", "onednn" },
  { "llvm-config-19", "llvm" },
  { "llvm-config", "llvm" },
};

/* Modules that build another module, not the app: each before the one it serves. */
static const struct {
  const char *module;
  const char *serves;
} prerequisites[] = {
  { "protobuf", "protobuf-c" },   /* protoc-c is a protoc plugin, built on libprotoc */
};

/* The oldest GNOME runtime whose libraries meet meson.build's versions (GTK >= 4.8, libadwaita
 * >= 1.2, GLib >= 2.74 since 43; GtkSourceView 5.10 >= 5.4 named as the runtime's in 45). */
#define OLDEST_RUNTIME 45

static char *root;

static char *
read_text (const char *path)
{
  g_autoptr(GError) error = NULL;
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, &error))
    g_error ("%s", error->message);
  return text;
}

static JsonNode *
load_manifest (void)
{
  g_autofree char *path = g_build_filename (root, "flatpak", "io.github.fusebench.Fusebench.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  if (!json_parser_load_from_file (parser, path, &error))
    g_error ("%s", error->message);
  return json_node_copy (json_parser_get_root (parser));
}

/* ---- the meson.build files ----------------------------------------------------------------- */

/* Whether path is a build folder (meson's private files inside). */
static gboolean
is_build_dir (const char *path)
{
  g_autofree char *private = g_build_filename (path, "meson-private", NULL);
  return g_file_test (private, G_FILE_TEST_IS_DIR);
}

static void
collect_meson_files (const char *dir, GPtrArray *files)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (name[0] == '.')
        continue;
      if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
        {
          if (!is_build_dir (path))
            collect_meson_files (path, files);
        }
      else if (g_str_equal (name, "meson.build"))
        g_ptr_array_add (files, g_steal_pointer (&path));
    }
}

static void
add_matches (GHashTable *deps, const char *text, const char *file, const char *pattern)
{
  g_autoptr(GRegex) regex = g_regex_new (pattern, 0, 0, NULL);
  g_autoptr(GMatchInfo) match = NULL;

  g_assert_nonnull (regex);
  g_regex_match (regex, text, 0, &match);
  while (g_match_info_matches (match))
    {
      g_autofree char *name = g_match_info_fetch (match, 1);
      if (!g_hash_table_contains (deps, name))
        g_hash_table_insert (deps, g_steal_pointer (&name), g_strdup (file));
      g_match_info_next (match, NULL);
    }
}

/* Every dependency the meson.build files name -> the first file naming it. */
static GHashTable *
meson_dependencies (void)
{
  GHashTable *deps = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);

  collect_meson_files (root, files);
  g_assert_cmpuint (files->len, >=, 10);
  for (guint i = 0; i < files->len; i++)
    {
      const char *file = g_ptr_array_index (files, i);
      g_autofree char *text = read_text (file);

      add_matches (deps, text, file, "(?<!declare_)dependency\\('([^']+)'");
      add_matches (deps, text, file, "find_library\\('([^']+)'");
      add_matches (deps, text, file, "has_header\\('([^']+)'");
      /* find_program takes several names: every quoted one before its keywords. */
      add_matches (deps, text, file, "find_program\\('([^']+)'");
      add_matches (deps, text, file, "find_program\\('[^']+', '([^']+)'");
      /* The LLVM lookup goes through a list of names, the importer's schema through a file. */
      add_matches (deps, text, file, "'(llvm-config[^']*)'");
      add_matches (deps, text, file, "'(onnx\\.proto)'");
    }
  return deps;
}

static const char *
provider_of (const char *dep)
{
  for (guint i = 0; i < G_N_ELEMENTS (provided); i++)
    if (g_str_equal (provided[i].name, dep))
      return provided[i].provider;
  return NULL;
}

/* ---- the checks, each returning FALSE with what is wrong ---------------------------------- */

static gboolean G_GNUC_PRINTF (2, 3)
fail (char **why, const char *format, ...)
{
  va_list ap;

  va_start (ap, format);
  *why = g_strdup_vprintf (format, ap);
  va_end (ap);
  return FALSE;
}

static const char *
string_member (JsonObject *object, const char *name)
{
  JsonNode *node = json_object_get_member (object, name);
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING
         ? json_node_get_string (node) : NULL;
}

static JsonArray *
array_member (JsonObject *object, const char *name)
{
  JsonNode *node = json_object_get_member (object, name);
  return node != NULL && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

static gboolean
is_hex (const char *s, gsize len)
{
  if (s == NULL || strlen (s) != len)
    return FALSE;
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_isxdigit (s[i]) || g_ascii_isupper (s[i]))
      return FALSE;
  return TRUE;
}

static gboolean
check_well_formed (JsonNode *root_node, char **why)
{
  static const char * const buildsystems[] = { "meson", "cmake", "cmake-ninja", "autotools",
                                               "simple", NULL };
  g_autoptr(GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  JsonObject *m;
  JsonArray *modules;
  const char *last = NULL;

  if (!JSON_NODE_HOLDS_OBJECT (root_node))
    return fail (why, "the manifest is not a JSON object");
  m = json_node_get_object (root_node);
  if (g_strcmp0 (string_member (m, "id"), "io.github.fusebench.Fusebench") != 0)
    return fail (why, "id is not the application id meson.build gives a release");
  if (g_strcmp0 (string_member (m, "runtime"), "org.gnome.Platform") != 0
      || g_strcmp0 (string_member (m, "sdk"), "org.gnome.Sdk") != 0)
    return fail (why, "runtime and sdk must be GNOME's");
  if (string_member (m, "runtime-version") == NULL
      || atoi (string_member (m, "runtime-version")) < OLDEST_RUNTIME)
    return fail (why, "runtime-version must be %d or later", OLDEST_RUNTIME);
  if (g_strcmp0 (string_member (m, "command"), "fusebench") != 0)
    return fail (why, "command is not the fusebench executable");
  if ((modules = array_member (m, "modules")) == NULL || json_array_get_length (modules) == 0)
    return fail (why, "no modules");
  for (guint i = 0; i < json_array_get_length (modules); i++)
    {
      JsonNode *node = json_array_get_element (modules, i);
      JsonObject *module;
      const char *name, *bs;
      JsonArray *sources;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        return fail (why, "module %u is not an object", i);
      module = json_node_get_object (node);
      name = string_member (module, "name");
      bs = string_member (module, "buildsystem");
      if (name == NULL || g_hash_table_contains (names, name))
        return fail (why, "module %u has no name, or one already used", i);
      g_hash_table_add (names, (gpointer) name);
      if (bs == NULL || !g_strv_contains (buildsystems, bs))
        return fail (why, "module %s: buildsystem %s", name, bs ? bs : "missing");
      if (g_str_equal (bs, "simple") && (array_member (module, "build-commands") == NULL
                                         || json_array_get_length (array_member (module, "build-commands")) == 0))
        return fail (why, "module %s: a simple module needs build-commands", name);
      if ((sources = array_member (module, "sources")) == NULL || json_array_get_length (sources) == 0)
        return fail (why, "module %s has no sources", name);
      last = name;
    }
  if (g_strcmp0 (last, "fusebench") != 0)
    return fail (why, "the last module must be fusebench itself");
  return TRUE;
}

static gboolean
check_pinned (JsonNode *root_node, char **why)
{
  JsonArray *modules = array_member (json_node_get_object (root_node), "modules");

  for (guint i = 0; i < json_array_get_length (modules); i++)
    {
      JsonObject *module = json_array_get_object_element (modules, i);
      const char *name = string_member (module, "name");
      JsonArray *sources = array_member (module, "sources");

      for (guint k = 0; k < json_array_get_length (sources); k++)
        {
          JsonObject *src = json_array_get_object_element (sources, k);
          const char *type = string_member (src, "type");
          const char *url = string_member (src, "url");

          if (g_strcmp0 (type, "archive") == 0 || g_strcmp0 (type, "file") == 0)
            {
              if (url == NULL || !g_str_has_prefix (url, "https://"))
                return fail (why, "module %s: source %u has no https url", name, k);
              if (!is_hex (string_member (src, "sha256"), 64))
                return fail (why, "module %s: %s has no sha256", name, url);
              /* Where the checksum came from, so that it can be checked again. */
              if (string_member (src, "x-origin") == NULL)
                return fail (why, "module %s: %s does not say where its sha256 comes from",
                                                name, url);
            }
          else if (g_strcmp0 (type, "git") == 0)
            {
              if (!is_hex (string_member (src, "commit"), 40))
                return fail (why, "module %s: git source %u has no commit", name, k);
            }
          else if (g_strcmp0 (type, "dir") == 0)
            {
              if (g_strcmp0 (name, "fusebench") != 0 || g_strcmp0 (string_member (src, "path"), "..") != 0)
                return fail (why, "module %s: only fusebench is the tree itself", name);
            }
          else
            return fail (why, "module %s: source type %s is not pinned", name,
                                            type ? type : "(none)");
        }
    }
  return TRUE;
}

static int
module_index (JsonNode *root_node, const char *name)
{
  JsonArray *modules = array_member (json_node_get_object (root_node), "modules");

  for (guint i = 0; i < json_array_get_length (modules); i++)
    if (g_strcmp0 (string_member (json_array_get_object_element (modules, i), "name"), name) == 0)
      return i;
  return -1;
}

static gboolean
check_modules (JsonNode *root_node, GHashTable *deps, char **why)
{
  JsonArray *modules = array_member (json_node_get_object (root_node), "modules");
  int app = module_index (root_node, "fusebench");
  g_autoptr(GHashTable) needed = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter it;
  gpointer dep, file;

  g_hash_table_iter_init (&it, deps);
  while (g_hash_table_iter_next (&it, &dep, &file))
    {
      const char *provider = provider_of (dep);
      int at;

      if (provider == NULL)
        return fail (why, "%s declares %s, which neither the runtime nor a module of "
                                        "the manifest is known to provide", (char *) file,
                                        (char *) dep);
      if (g_str_equal (provider, RUNTIME) || g_str_equal (provider, SDK) || g_str_equal (provider, ABSENT))
        continue;
      if ((at = module_index (root_node, provider)) < 0 || at > app)
        return fail (why, "%s needs %s, which module %s builds: it is not in the "
                                        "manifest before fusebench", (char *) file, (char *) dep,
                                        provider);
      g_hash_table_add (needed, (gpointer) provider);
    }
  for (guint i = 0; i < G_N_ELEMENTS (prerequisites); i++)
    if (g_hash_table_contains (needed, prerequisites[i].serves))
      {
        int at = module_index (root_node, prerequisites[i].module);
        if (at < 0 || at > module_index (root_node, prerequisites[i].serves))
          return fail (why, "module %s needs %s built before it", prerequisites[i].serves,
                                          prerequisites[i].module);
        g_hash_table_add (needed, (gpointer) prerequisites[i].module);
      }
  /* Nothing is built that meson.build does not need. */
  for (guint i = 0; i < json_array_get_length (modules); i++)
    {
      const char *name = string_member (json_array_get_object_element (modules, i), "name");
      if (!g_str_equal (name, "fusebench") && !g_hash_table_contains (needed, name))
        return fail (why, "module %s provides nothing meson.build declares", name);
    }
  return TRUE;
}

static gboolean
has_option (JsonNode *root_node, const char *module, const char *option)
{
  JsonArray *modules = array_member (json_node_get_object (root_node), "modules");
  int at = module_index (root_node, module);
  JsonArray *opts;

  if (at < 0 || (opts = array_member (json_array_get_object_element (modules, at), "config-opts")) == NULL)
    return FALSE;
  for (guint i = 0; i < json_array_get_length (opts); i++)
    if (g_strcmp0 (json_array_get_string_element (opts, i), option) == 0)
      return TRUE;
  return FALSE;
}

static const char *
source_url (JsonNode *root_node, const char *module)
{
  JsonArray *modules = array_member (json_node_get_object (root_node), "modules");
  int at = module_index (root_node, module);
  JsonArray *sources = at >= 0 ? array_member (json_array_get_object_element (modules, at), "sources") : NULL;

  return sources != NULL ? string_member (json_array_get_object_element (sources, 0), "url") : NULL;
}

/* The options meson.build needs of what the modules build, read from meson.build. */
static gboolean
check_options (JsonNode *root_node, char **why)
{
  g_autofree char *codegen_path = g_build_filename (root, "compiler", "codegen", "meson.build", NULL);
  g_autofree char *codegen = read_text (codegen_path);
  g_autoptr(GRegex) components = g_regex_new ("llvm_modules = \\[([^\\]]*)\\]", 0, 0, NULL);
  g_autoptr(GRegex) version = g_regex_new ("version_compare\\('>= ([0-9]+)'\\)", 0, 0, NULL);
  g_autoptr(GMatchInfo) cm = NULL, vm = NULL;
  g_autofree char *list = NULL, *major = NULL, *tag = NULL;
  g_autofree char *targets = NULL;
  const char *url = source_url (root_node, "llvm");

  if (!g_regex_match (components, codegen, 0, &cm) || !g_regex_match (version, codegen, 0, &vm))
    return fail (why, "compiler/codegen/meson.build names no LLVM components or version");
  list = g_match_info_fetch (cm, 1);
  major = g_match_info_fetch (vm, 1);
  tag = g_strdup_printf ("/llvmorg-%s.", major);
  if (url == NULL || strstr (url, tag) == NULL)
    return fail (why, "meson.build wants LLVM %s; the llvm module builds %s", major,
                                    url ? url : "nothing");
  /* The host's back end (x86-64, what the Flatpak is built for) and NVPTX where the components
   * ask for them; the C API in one shared library, the only part the app keeps. */
  targets = g_strdup_printf ("-DLLVM_TARGETS_TO_BUILD=%s%s%s", strstr (list, "'native'") ? "X86" : "",
                             strstr (list, "'native'") && strstr (list, "'nvptx'") ? ";" : "",
                             strstr (list, "'nvptx'") ? "NVPTX" : "");
  if (!has_option (root_node, "llvm", targets))
    return fail (why, "the llvm module must build %s", targets);
  if (!has_option (root_node, "llvm", "-DLLVM_BUILD_LLVM_DYLIB=ON"))
    return fail (why, "the llvm module must build libLLVM as a shared library");
  /* meson.build threads oneDNN through OpenMP and does without its OpenCL runtime. */
  if (strstr (codegen, "dependency('openmp'") != NULL && !has_option (root_node, "onednn", "-DDNNL_CPU_RUNTIME=OMP"))
    return fail (why, "oneDNN must use OpenMP, as meson.build expects");
  if (!has_option (root_node, "onednn", "-DDNNL_GPU_RUNTIME=NONE"))
    return fail (why, "oneDNN must be built without its GPU (OpenCL) runtime");
  /* protoc-c compiles onnx.proto at build time. */
  if (has_option (root_node, "protobuf-c", "--disable-protoc"))
    return fail (why, "protobuf-c must build protoc-c");
  if (!has_option (root_node, "fusebench", "-Dgtk=true"))
    return fail (why, "the app is the GTK build (-Dgtk=true)");
  return TRUE;
}

/* ---- the tests ------------------------------------------------------------------------------ */

/* Runs a check that writes its reason into why, then reads it: in one call, assert_ok (check
 * (m, &why), why), C leaves open which argument is evaluated first. */
#define CHECKED(check) \
  G_STMT_START { gboolean ok_ = (check); assert_ok (ok_, why); why = NULL; } G_STMT_END

static void
assert_ok (gboolean ok, char *why)
{
  if (!ok)
    g_error ("%s", why);
  g_free (why);
}

static void
test_well_formed (void)
{
  g_autoptr(JsonNode) m = load_manifest ();
  char *why = NULL;

  CHECKED (check_well_formed (m, &why));
}

static void
test_pinned (void)
{
  g_autoptr(JsonNode) m = load_manifest ();
  char *why = NULL;

  CHECKED (check_pinned (m, &why));
}

static void
test_modules_match_meson (void)
{
  g_autoptr(JsonNode) m = load_manifest ();
  g_autoptr(GHashTable) deps = meson_dependencies ();
  char *why = NULL;

  {
    g_autofree gpointer *names = g_hash_table_get_keys_as_array (deps, NULL);
    g_autofree char *list = g_strjoinv (", ", (char **) names);
    g_test_message ("meson.build declares: %s", list);
  }
  /* The scan found what the build is known to need. */
  g_assert_true (g_hash_table_contains (deps, "gtksourceview-5"));
  g_assert_true (g_hash_table_contains (deps, "llvm-config-19"));
  g_assert_true (g_hash_table_contains (deps, "dnnl"));
  g_assert_true (g_hash_table_contains (deps, "onnx.proto"));
  CHECKED (check_modules (m, deps, &why));
  why = NULL;
  CHECKED (check_options (m, &why));
}

static JsonObject *
module_object (JsonNode *m, const char *name)
{
  return json_array_get_object_element (array_member (json_node_get_object (m), "modules"),
                                        module_index (m, name));
}

/* Each check fails on a manifest broken the way it guards against. */
static void
test_checks_catch (void)
{
  g_autoptr(GHashTable) deps = meson_dependencies ();
  char *why = NULL;

  {
    g_autoptr(JsonNode) m = load_manifest ();
    JsonObject *src = json_array_get_object_element (array_member (module_object (m, "onednn"), "sources"), 0);
    json_object_remove_member (src, "sha256");
    g_assert_false (check_pinned (m, &why));
    g_assert_nonnull (strstr (why, "has no sha256"));
    g_clear_pointer (&why, g_free);
  }
  {
    g_autoptr(JsonNode) m = load_manifest ();
    JsonObject *src = json_array_get_object_element (array_member (module_object (m, "graphviz"), "sources"), 0);
    json_object_set_string_member (src, "type", "git");
    json_object_set_string_member (src, "tag", "2.42.2");
    g_assert_false (check_pinned (m, &why));
    g_assert_nonnull (strstr (why, "has no commit"));
    g_clear_pointer (&why, g_free);
  }
  {
    /* A dependency meson.build would add, with no module for it. */
    g_autoptr(JsonNode) m = load_manifest ();
    g_autoptr(GHashTable) more = meson_dependencies ();
    g_hash_table_insert (more, g_strdup ("libfrobnicate"), g_strdup ("meson.build"));
    g_assert_false (check_modules (m, more, &why));
    g_assert_nonnull (strstr (why, "libfrobnicate"));
    g_clear_pointer (&why, g_free);
  }
  {
    /* A module left out; then one that nothing needs. */
    g_autoptr(JsonNode) m = load_manifest ();
    json_object_set_string_member (module_object (m, "openblas"), "name", "blas");
    g_assert_false (check_modules (m, deps, &why));
    g_assert_nonnull (strstr (why, "openblas"));
    g_clear_pointer (&why, g_free);
  }
  {
    g_autoptr(JsonNode) m = load_manifest ();
    JsonArray *modules = array_member (json_node_get_object (m), "modules");
    JsonObject *extra = json_object_new ();
    json_object_set_string_member (extra, "name", "libfoo");
    json_array_add_object_element (modules, extra);
    g_assert_false (check_modules (m, deps, &why));
    g_assert_nonnull (strstr (why, "libfoo"));
    g_clear_pointer (&why, g_free);
  }
  {
    g_autoptr(JsonNode) m = load_manifest ();
    JsonArray *opts = array_member (module_object (m, "llvm"), "config-opts");
    for (guint i = 0; i < json_array_get_length (opts); i++)
      if (g_str_has_prefix (json_array_get_string_element (opts, i), "-DLLVM_TARGETS_TO_BUILD="))
        json_array_remove_element (opts, i--);
    json_array_add_string_element (opts, "-DLLVM_TARGETS_TO_BUILD=X86");
    g_assert_false (check_options (m, &why));
    g_assert_nonnull (strstr (why, "NVPTX"));
    g_clear_pointer (&why, g_free);
  }
  {
    g_autoptr(JsonNode) m = load_manifest ();
    json_object_set_string_member (json_node_get_object (m), "runtime-version", "43");
    g_assert_false (check_well_formed (m, &why));
    g_clear_pointer (&why, g_free);
  }
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  root = g_build_filename (g_getenv ("G_TEST_SRCDIR"), "..", NULL);
  g_test_add_func ("/flatpak/well-formed", test_well_formed);
  g_test_add_func ("/flatpak/pinned", test_pinned);
  g_test_add_func ("/flatpak/modules-match-meson", test_modules_match_meson);
  g_test_add_func ("/flatpak/checks-catch", test_checks_catch);
  status = g_test_run ();
  g_free (root);
  return status;
}
