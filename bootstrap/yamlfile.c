/* yamlfile: libyaml document loading with line:column error reporting.
 * See yamlfile.h for the contracts. */
#define _GNU_SOURCE
#include "yamlfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	size_t n = end ? (size_t)(end - p) : strlen(p);
	/* a one-line file of a megabyte must not flood the terminal: show a window */
	enum { WIDTH = 160 };
	if (n > WIDTH && column > WIDTH / 2) {
		size_t skip = column - WIDTH / 2 < n ? column - WIDTH / 2 : n;
		p += skip;
		n -= skip;
		column -= skip;
	}
	if (n > WIDTH)
		n = WIDTH;
	/* redacted (util.h), the caret moved by what the redaction changed before it */
	char *shown = xstrndup(p, n);
	char *before = xstrndup(p, column - 1 < n ? column - 1 : n);
	char *shown_line = url_redact(shown), *shown_before = url_redact(before);
	fprintf(stderr, "  %s\n  ", shown_line);
	for (size_t c = 0; shown_before[c]; c++)
		fputc(shown_before[c] == '\t' ? '\t' : ' ', stderr);
	free(shown);
	free(before);
	free(shown_line);
	free(shown_before);
	fputs("^\n", stderr);
}

static void report_at(struct yamlfile *f, size_t line, size_t column, const char *fmt, va_list ap)
{
	fflush(stdout);
	if (line)
		fprintf(stderr, "%s:%zu:%zu: ", f->path, line, column);
	else
		fprintf(stderr, "%s: ", f->path);
	vprint_redacted(stderr, fmt, ap);
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

/* Line and column (1-based) of byte `offset` of the text. */
static void position_of(const char *text, size_t offset, size_t *line, size_t *column)
{
	*line = 1;
	*column = 1;
	for (size_t i = 0; i < offset; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*column = 1;
		} else {
			(*column)++;
		}
	}
}

static void report_at_offset(struct yamlfile *f, size_t offset, const char *fmt, ...)
{
	size_t line, column;
	position_of(f->text, offset, &line, &column);
	va_list ap;
	va_start(ap, fmt);
	report_at(f, line, column, fmt, ap);
	va_end(ap);
}

/* Read the recipe into f->text. Only a regular file is read: a FIFO would block forever and
 * a device never end, so the file is opened without blocking and checked before any read.
 * A file over the size limit is refused where the limit falls. */
static int read_recipe(struct yamlfile *f, size_t *len)
{
	int fd = open(f->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		error("cannot open '%s':", f->path);
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		error("cannot stat '%s':", f->path);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		yamlfile_error(f, NULL, "not a regular file (%s); a recipe must be a plain file",
		               S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" :
		               S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "special");
		close(fd);
		return -1;
	}
	size_t cap = YAMLFILE_MAX_BYTES + 1, n = 0;
	f->text = xmalloc(cap + 1);
	while (n < cap) {
		ssize_t r = read(fd, f->text + n, cap - n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0) {
			error("cannot read '%s':", f->path);
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	f->text[n] = '\0';
	if (n > YAMLFILE_MAX_BYTES) {
		report_at_offset(f, YAMLFILE_MAX_BYTES, "file is larger than %d bytes; a recipe "
		                 "must be smaller", YAMLFILE_MAX_BYTES);
		return -1;
	}
	if (strlen(f->text) != n) {
		report_at_offset(f, strlen(f->text), "file contains a NUL byte");
		return -1;
	}
	*len = n;
	return 0;
}

static void report_parser(struct yamlfile *f, const yaml_parser_t *parser)
{
	const char *what = parser->problem ? parser->problem : "invalid YAML";
	if (parser->context)
		report_mark(f, parser->problem_mark, "%s %s", what, parser->context);
	else
		report_mark(f, parser->problem_mark, "%s", what);
}

/* Walk the file's events before building the document: libyaml's loader takes time
 * quadratic in the nesting depth (100,000 levels: 45 s), and silently ignores every
 * document after the first. Stops at the first problem. */
static int check_structure(struct yamlfile *f, size_t len)
{
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)f->text, len);
	int depth = 0, documents = 0, rc = 0;
	for (bool end = false; !end && rc == 0;) {
		yaml_event_t event;
		if (!yaml_parser_parse(&parser, &event)) {
			report_parser(f, &parser);
			rc = -1;
			break;
		}
		switch (event.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (++documents > 1) {
				report_mark(f, event.start_mark, "a second YAML document starts here; a "
				            "recipe file holds exactly one");
				rc = -1;
			}
			break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (++depth > YAMLFILE_MAX_DEPTH) {
				report_mark(f, event.start_mark, "nested deeper than %d levels",
				            YAMLFILE_MAX_DEPTH);
				rc = -1;
			}
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			depth--;
			break;
		case YAML_STREAM_END_EVENT:
			end = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&event);
	}
	yaml_parser_delete(&parser);
	return rc;
}

static const char *key_text(yaml_node_t *key)
{
	return key && key->type == YAML_SCALAR_NODE ? (const char *)key->data.scalar.value : NULL;
}

struct key_ref {
	const char *text;
	size_t index;
};

static int compare_keys(const void *a, const void *b)
{
	const struct key_ref *x = a, *y = b;
	int c = strcmp(x->text, y->text);
	return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Report every key of `map` given twice, at the later one, naming the first one's line.
 * Sorted, so a mapping of 100,000 keys costs no more than a sort. */
static void check_duplicates(struct yamlfile *f, yaml_node_t *map)
{
	size_t n = yamlfile_map_size(map), m = 0;
	if (n < 2)
		return;
	struct key_ref *keys = xcalloc(n, sizeof(*keys));
	size_t *first = xcalloc(n, sizeof(*first));   /* index of the first equal key, or i */
	for (size_t i = 0; i < n; i++) {
		first[i] = i;
		const char *text = key_text(yamlfile_map_key(f, map, i));
		if (text)
			keys[m++] = (struct key_ref){text, i};
	}
	qsort(keys, m, sizeof(*keys), compare_keys);
	for (size_t i = 1; i < m; i++)
		if (strcmp(keys[i].text, keys[i - 1].text) == 0)
			first[keys[i].index] = first[keys[i - 1].index];
	for (size_t i = 0; i < n; i++) {
		if (first[i] == i)
			continue;
		yaml_node_t *key = yamlfile_map_key(f, map, i);
		yamlfile_error(f, key, "duplicate key '%s' (first given on line %zu)", key_text(key),
		               yamlfile_map_key(f, map, first[i])->start_mark.line + 1);
	}
	free(first);
	free(keys);
}

int yamlfile_load(struct yamlfile *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(path);
	size_t len;
	if (read_recipe(f, &len) < 0 || check_structure(f, len) < 0)
		return -1;
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)f->text, len);
	if (!yaml_parser_load(&parser, &f->doc)) {
		report_parser(f, &parser);
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
	/* every mapping, not only those with a fixed set of keys: `vars` too */
	for (yaml_node_t *node = f->doc.nodes.start; node < f->doc.nodes.top; node++)
		if (node->type == YAML_MAPPING_NODE)
			check_duplicates(f, node);
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
