/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Bump allocation for graph memory: a graph and its subgraphs free everything at once, so passes
 * never track the ownership of individual nodes, values, strings or small arrays. */
#include "fb-arena-private.h"

#include <string.h>

#define BLOCK_SIZE (64 * 1024)

typedef struct _Block Block;
struct _Block {
  Block *next;
  gsize  used;
  gsize  size;
  /* data follows, max-aligned */
  max_align_t data[];
};

struct _FbArena {
  Block *blocks;
};

FbArena *
_fb_arena_new (void)
{
  return g_new0 (FbArena, 1);
}

void
_fb_arena_free (FbArena *arena)
{
  Block *b, *next;

  if (arena == NULL)
    return;
  for (b = arena->blocks; b != NULL; b = next)
    {
      next = b->next;
      g_free (b);
    }
  g_free (arena);
}

gpointer
fb_arena_alloc (FbArena *arena, gsize size)
{
  const gsize align = sizeof (max_align_t);
  Block *b;
  gpointer p;

  g_return_val_if_fail (arena != NULL, NULL);
  size = (size + align - 1) & ~(align - 1);
  b = arena->blocks;
  if (b == NULL || b->size - b->used < size)
    {
      gsize block_size = MAX (BLOCK_SIZE, size);
      b = g_malloc (sizeof (Block) + block_size);
      b->used = 0;
      b->size = block_size;
      /* A large one-off block goes second so the current block keeps serving small requests. */
      if (size > BLOCK_SIZE / 4 && arena->blocks != NULL)
        {
          b->next = arena->blocks->next;
          arena->blocks->next = b;
        }
      else
        {
          b->next = arena->blocks;
          arena->blocks = b;
        }
    }
  p = (char *) b->data + b->used;
  b->used += size;
  memset (p, 0, size);
  return p;
}

const char *
fb_arena_strdup (FbArena *arena, const char *s)
{
  gsize n;
  char *p;

  if (s == NULL)
    return NULL;
  n = strlen (s) + 1;
  p = fb_arena_alloc (arena, n);
  memcpy (p, s, n);
  return p;
}

gpointer
fb_arena_memdup (FbArena *arena, gconstpointer src, gsize size)
{
  gpointer p;

  if (src == NULL || size == 0)
    return NULL;
  p = fb_arena_alloc (arena, size);
  memcpy (p, src, size);
  return p;
}
