/* yamlfile: libyaml document loading with line:column error reporting.
 * See yamlfile.h for the contracts. */
#define _GNU_SOURCE
#include "yamlfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void quote_line(const char *text, size_t line, size_t column)
{
	const char *p = text;
	for (size_t l = 1; l < line && p; l++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return;
	const char *end = strchr(p, '\n');
	int n = end ? (int)(end - p) : (int)strlen(p);
	fprintf(stderr, "  %.*s\n  ", n, p);
	for (size_t c = 1; c < column && (int)c <= n; c++)
		fputc(p[c - 1] == '\t' ? '\t' : ' ', stderr);
	fputs("^\n", stderr);
}

static void report_at(struct yamlfile *f, size_t line, size_t column, const char *fmt, va_list ap)
{
	fflush(stdout);
	if (line)
		fprintf(stderr, "%s:%zu:%zu: ", f->path, line, column);
	else
		fprintf(stderr, "%s: ", f->path);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	if (line && f->text)
		quote_line(f->text, line, column);
	f->errors++;
}

static void report_mark(struct yamlfile *f, yaml_mark_t mark, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report_at(f, mark.line + 1, mark.column + 1, fmt, ap);
	va_end(ap);
}

void yamlfile_error(struct yamlfile *f, const yaml_node_t *node, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (node)
		report_at(f, node->start_mark.line + 1, node->start_mark.column + 1, fmt, ap);
	else
		report_at(f, 0, 0, fmt, ap);
	va_end(ap);
}

int yamlfile_load(struct yamlfile *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(path);
	size_t len;
	f->text = read_file(path, &len);
	if (!f->text)
		return -1;
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)f->text, len);
	if (!yaml_parser_load(&parser, &f->doc)) {
		const char *what = parser.problem ? parser.problem : "invalid YAML";
		yaml_mark_t mark = parser.problem_mark;
		if (parser.context)
			report_mark(f, mark, "%s %s", what, parser.context);
		else
			report_mark(f, mark, "%s", what);
		yaml_parser_delete(&parser);
		return -1;
	}
	yaml_parser_delete(&parser);
	f->has_doc = true;
	yaml_node_t *root = yaml_document_get_root_node(&f->doc);
	if (!root) {
		yamlfile_error(f, NULL, "file is empty");
		return -1;
	}
	if (root->type != YAML_MAPPING_NODE) {
		yamlfile_error(f, root, "expected a mapping of keys to values at the top level");
		return -1;
	}
	return 0;
}

void yamlfile_release(struct yamlfile *f)
{
	if (f->has_doc)
		yaml_document_delete(&f->doc);
	free(f->path);
	free(f->text);
	memset(f, 0, sizeof(*f));
}

yaml_node_t *yamlfile_root(struct yamlfile *f)
{
	return yaml_document_get_root_node(&f->doc);
}

size_t yamlfile_map_size(yaml_node_t *map)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return 0;
	return (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
}

yaml_node_t *yamlfile_map_key(struct yamlfile *f, yaml_node_t *map, size_t i)
{
	return yaml_document_get_node(&f->doc, map->data.mapping.pairs.start[i].key);
}

yaml_node_t *yamlfile_map_value(struct yamlfile *f, yaml_node_t *map, size_t i)
{
	return yaml_document_get_node(&f->doc, map->data.mapping.pairs.start[i].value);
}

static const char *key_text(yaml_node_t *key)
{
	return key && key->type == YAML_SCALAR_NODE ? (const char *)key->data.scalar.value : NULL;
}

static bool in_list(const char *const list[], const char *s)
{
	for (size_t i = 0; list && list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

void yamlfile_check_keys(struct yamlfile *f, yaml_node_t *map, const char *const allowed[],
                         const char *const required[])
{
	size_t n = yamlfile_map_size(map);
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *key = yamlfile_map_key(f, map, i);
		const char *name = key_text(key);
		if (!name) {
			yamlfile_error(f, key, "keys must be plain strings");
			continue;
		}
		for (size_t j = 0; j < i; j++) {
			const char *other = key_text(yamlfile_map_key(f, map, j));
			if (other && strcmp(other, name) == 0) {
				yaml_node_t *first = yamlfile_map_key(f, map, j);
				yamlfile_error(f, key, "duplicate key '%s' (first given on line %zu)", name,
				               first->start_mark.line + 1);
				break;
			}
		}
		if (in_list(allowed, name))
			continue;
		const char *best = NULL;
		size_t best_distance = (size_t)-1;
		for (size_t a = 0; allowed[a]; a++) {
			size_t d = edit_distance(name, allowed[a]);
			if (d < best_distance) {
				best_distance = d;
				best = allowed[a];
			}
		}
		if (best && best_distance <= (strlen(name) + 2) / 2 + 1)
			yamlfile_error(f, key, "unknown key '%s'; did you mean '%s'?", name, best);
		else {
			struct buf all = {0};
			for (size_t a = 0; allowed[a]; a++)
				buf_printf(&all, "%s%s", a ? ", " : "", allowed[a]);
			yamlfile_error(f, key, "unknown key '%s' (valid keys: %s)", name, all.s);
			buf_release(&all);
		}
	}
	for (size_t r = 0; required && required[r]; r++)
		if (!yamlfile_get(f, map, required[r]))
			yamlfile_error(f, map, "missing required key '%s'", required[r]);
}

yaml_node_t *yamlfile_get(struct yamlfile *f, yaml_node_t *map, const char *key)
{
	size_t n = yamlfile_map_size(map);
	for (size_t i = 0; i < n; i++) {
		const char *name = key_text(yamlfile_map_key(f, map, i));
		if (name && strcmp(name, key) == 0)
			return yamlfile_map_value(f, map, i);
	}
	return NULL;
}

const char *yamlfile_scalar(struct yamlfile *f, yaml_node_t *node, const char *what)
{
	if (!node)
		return NULL;
	if (node->type != YAML_SCALAR_NODE) {
		yamlfile_error(f, node, "'%s' must be a string, not a %s%s", what,
		               node->type == YAML_SEQUENCE_NODE ? "list" : "mapping",
		               node->type == YAML_MAPPING_NODE && node->start_mark.line ==
		                   node->end_mark.line
		                   ? " (': ' inside a plain string starts a mapping: quote the string "
		                     "or write it as a '|' block)"
		                   : "");
		return NULL;
	}
	return (const char *)node->data.scalar.value;
}

int yamlfile_sequence(struct yamlfile *f, yaml_node_t *node, const char *what,
                      yaml_node_t ***items, size_t *count)
{
	*items = NULL;
	*count = 0;
	if (!node)
		return 0;
	if (node->type != YAML_SEQUENCE_NODE) {
		yamlfile_error(f, node, "'%s' must be a list", what);
		return -1;
	}
	size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
	yaml_node_t **v = xcalloc(n, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = yaml_document_get_node(&f->doc, node->data.sequence.items.start[i]);
	*items = v;
	*count = n;
	return 0;
}

int yamlfile_strings(struct yamlfile *f, yaml_node_t *node, const char *what, struct strlist *out)
{
	if (!node)
		return 0;
	if (node->type == YAML_SCALAR_NODE) {
		strlist_add(out, (const char *)node->data.scalar.value);
		return 0;
	}
	yaml_node_t **items;
	size_t n;
	if (yamlfile_sequence(f, node, what, &items, &n) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = yamlfile_scalar(f, items[i], what);
		if (s)
			strlist_add(out, s);
		else
			rc = -1;
	}
	free(items);
	return rc;
}

int yamlfile_string_map(struct yamlfile *f, yaml_node_t *node, const char *what,
                        struct strlist *out)
{
	if (!node)
		return 0;
	if (node->type != YAML_MAPPING_NODE) {
		yamlfile_error(f, node, "'%s' must be a mapping of names to strings", what);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < yamlfile_map_size(node); i++) {
		const char *k = yamlfile_scalar(f, yamlfile_map_key(f, node, i), what);
		const char *v = yamlfile_scalar(f, yamlfile_map_value(f, node, i), what);
		if (!k || !v) {
			rc = -1;
			continue;
		}
		strlist_add(out, k);
		strlist_add(out, v);
	}
	return rc;
}
