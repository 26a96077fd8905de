/*
 * yaml_tree.c: libyaml's event stream folded into a small node tree that
 * keeps each node's line and column, so every later check can say where
 * the offending value is. Anchors, aliases and several documents are
 * refused: a sweep file is one plain document.
 */
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "sweep/sweep_int.h"

static YNode *node_new(YNodeKind kind, const yaml_event_t *ev)
{
    YNode *n = fs_calloc(1, sizeof *n);
    n->kind = kind;
    n->line = (int)ev->start_mark.line + 1;
    n->col = (int)ev->start_mark.column + 1;
    return n;
}

void ytree_free(YNode *n)
{
    if (!n) return;
    for (int i = 0; i < n->n; i++) {
        ytree_free(n->item[i]);
        if (n->key) ytree_free(n->key[i]);
    }
    free(n->item);
    free(n->key);
    free(n->value);
    free(n);
}

const YNode *ytree_get(const YNode *map, const char *key)
{
    if (!map || map->kind != YN_MAP) return NULL;
    for (int i = 0; i < map->n; i++)
        if (strcmp(map->key[i]->value, key) == 0) return map->item[i];
    return NULL;
}

const YNode *ytree_key(const YNode *map, const char *key)
{
    if (!map || map->kind != YN_MAP) return NULL;
    for (int i = 0; i < map->n; i++)
        if (strcmp(map->key[i]->value, key) == 0) return map->key[i];
    return NULL;
}

typedef struct {
    yaml_parser_t p;
    const char *name;
    FsErr *err;
    int failed;
} Reader;

static int next_event(Reader *r, yaml_event_t *ev)
{
    if (yaml_parser_parse(&r->p, ev)) return 0;
    const yaml_mark_t *m = &r->p.problem_mark;
    /* libyaml reports an allocation it could not make as a parser error
     * with no problem text: not the file's fault, and not a syntax error. */
    if (r->p.error == YAML_MEMORY_ERROR)
        fs_err_at(r->err, r->name, (long)m->line + 1, (long)m->column + 1,
                  "out of memory for its YAML parser (libyaml could not allocate; the file was not read to its end)");
    else if (r->p.context)
        fs_err_at(r->err, r->name, (long)m->line + 1, (long)m->column + 1, "YAML syntax error: %s %s",
                  r->p.problem ? r->p.problem : "?", r->p.context);
    else
        fs_err_at(r->err, r->name, (long)m->line + 1, (long)m->column + 1, "YAML syntax error: %s",
                  r->p.problem ? r->p.problem : "?");
    r->failed = 1;
    return -1;
}

static void refuse(Reader *r, const yaml_event_t *ev, const char *what)
{
    fs_err_at(r->err, r->name, (long)ev->start_mark.line + 1, (long)ev->start_mark.column + 1,
              "%s are not supported in sweep files; write the value out", what);
    r->failed = 1;
}

static void push(YNode *parent, YNode *key, YNode *item)
{
    if ((parent->n & (parent->n - 1)) == 0) { /* grow at powers of two */
        size_t cap = parent->n ? (size_t)parent->n * 2 : 4;
        parent->item = fs_realloc(parent->item, cap * sizeof *parent->item);
        if (parent->kind == YN_MAP) parent->key = fs_realloc(parent->key, cap * sizeof *parent->key);
    }
    if (parent->kind == YN_MAP) parent->key[parent->n] = key;
    parent->item[parent->n++] = item;
}

/* A scalar tagged !hex holds bytes as hex digits: how the canonical sweep
 * keeps a path that is not valid UTF-8 (YAML text must be), so a run
 * folder under such a path still resumes. Decoded in place (it shrinks). */
static int decode_hex(Reader *r, const yaml_event_t *ev, YNode *n)
{
    size_t len = strlen(n->value), k = 0;
    for (size_t i = 0; i + 1 < len || (i < len && (len & 1)); i += 2) {
        int hi = fs_hex_digit(n->value[i]), lo = i + 1 < len ? fs_hex_digit(n->value[i + 1]) : -1;
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
            fs_err_at(r->err, r->name, (long)ev->start_mark.line + 1, (long)ev->start_mark.column + 1,
                      "!hex: expected pairs of hex digits (bytes 01-ff), as foldsweep writes a path that is not "
                      "UTF-8");
            r->failed = 1;
            return -1;
        }
        n->value[k++] = (char)(hi << 4 | lo);
    }
    n->value[k] = '\0';
    n->quoted = 1;
    return 0;
}

/* Duplicate keys of one mapping, found in O(1) each (a sweep may hold a
 * mapping with tens of thousands of keys; comparing each with all before
 * it took seconds). Open addressing over key indices, grown at half full. */
typedef struct {
    int *slot; /* key index + 1, 0 empty */
    size_t cap;
} KeySet;

/* The index of key among map's keys, or -1 after recording that it will
 * be key number map->n. */
static int keyset_find_or_add(KeySet *s, const YNode *map, const char *key)
{
    if ((size_t)map->n * 2 >= s->cap) {
        size_t cap = s->cap ? s->cap * 4 : 64;
        free(s->slot);
        s->slot = fs_calloc(cap, sizeof(int));
        s->cap = cap;
        for (int i = 0; i < map->n; i++) {
            size_t h = (size_t)fs_fnv1a64(map->key[i]->value, strlen(map->key[i]->value), FS_FNV_OFFSET);
            while (s->slot[h & (cap - 1)]) h++;
            s->slot[h & (cap - 1)] = i + 1;
        }
    }
    size_t h = (size_t)fs_fnv1a64(key, strlen(key), FS_FNV_OFFSET) & (s->cap - 1);
    for (;; h = (h + 1) & (s->cap - 1)) {
        int i = s->slot[h] - 1;
        if (i < 0) {
            s->slot[h] = map->n + 1;
            return -1;
        }
        if (!strcmp(map->key[i]->value, key)) return i;
    }
}

/* Reads the node that starts with ev (already taken); NULL on failure. */
static YNode *read_node(Reader *r, yaml_event_t *ev, int depth)
{
    if (depth > 64) {
        refuse(r, ev, "nesting deeper than 64 levels");
        return NULL;
    }
    if (ev->type == YAML_ALIAS_EVENT) {
        refuse(r, ev, "aliases (*name)");
        return NULL;
    }
    if (ev->type == YAML_SCALAR_EVENT) {
        if (ev->data.scalar.anchor) {
            refuse(r, ev, "anchors (&name)");
            return NULL;
        }
        YNode *n = node_new(YN_SCALAR, ev);
        n->value = fs_malloc(ev->data.scalar.length + 1);
        memcpy(n->value, ev->data.scalar.value, ev->data.scalar.length);
        n->value[ev->data.scalar.length] = '\0';
        n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        if (ev->data.scalar.tag && !strcmp((const char *)ev->data.scalar.tag, "!hex") && decode_hex(r, ev, n)) {
            ytree_free(n);
            return NULL;
        }
        return n;
    }
    int is_map = ev->type == YAML_MAPPING_START_EVENT;
    if ((is_map && ev->data.mapping_start.anchor) || (!is_map && ev->data.sequence_start.anchor)) {
        refuse(r, ev, "anchors (&name)");
        return NULL;
    }
    YNode *n = node_new(is_map ? YN_MAP : YN_SEQ, ev);
    KeySet keys = {0};
    for (;;) {
        yaml_event_t child;
        if (next_event(r, &child)) break;
        if (child.type == YAML_MAPPING_END_EVENT || child.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&child);
            free(keys.slot);
            return n;
        }
        YNode *key = NULL;
        if (is_map) {
            key = read_node(r, &child, depth + 1);
            yaml_event_delete(&child);
            if (!key) break;
            if (key->kind != YN_SCALAR) {
                fs_err_at(r->err, r->name, key->line, key->col, "a key must be a plain name, not a list or mapping");
                r->failed = 1;
                ytree_free(key);
                break;
            }
            int first = keyset_find_or_add(&keys, n, key->value);
            if (first >= 0) {
                fs_err_at(r->err, r->name, key->line, key->col, "duplicate key '%s' (first at line %d)", key->value,
                          n->key[first]->line);
                r->failed = 1;
            }
            if (r->failed) {
                ytree_free(key);
                break;
            }
            if (next_event(r, &child)) {
                ytree_free(key);
                break;
            }
        }
        YNode *item = read_node(r, &child, depth + 1);
        yaml_event_delete(&child);
        if (!item) {
            ytree_free(key);
            break;
        }
        push(n, key, item);
    }
    free(keys.slot);
    ytree_free(n);
    return NULL;
}

YNode *ytree_parse(const char *text, size_t len, const char *name, int *failed, FsErr *err)
{
    Reader r = {.name = name, .err = err};
    *failed = 0;
    if (!yaml_parser_initialize(&r.p)) FS_DIE("yaml_parser_initialize: out of memory");
    yaml_parser_set_input_string(&r.p, (const unsigned char *)text, len);
    YNode *root = NULL;
    int docs = 0;
    yaml_event_t ev;
    while (!next_event(&r, &ev)) {
        yaml_event_type_t t = ev.type;
        if (t == YAML_DOCUMENT_START_EVENT && ++docs > 1) refuse(&r, &ev, "several documents (---)");
        if (t == YAML_SCALAR_EVENT || t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT ||
            t == YAML_ALIAS_EVENT)
            root = read_node(&r, &ev, 0);
        yaml_event_delete(&ev);
        if (t == YAML_STREAM_END_EVENT || r.failed) break;
    }
    yaml_parser_delete(&r.p);
    if (r.failed) {
        ytree_free(root);
        *failed = 1;
        return NULL;
    }
    return root;
}
