/* flametree.c: flame.json read and checked, one group's call tree built (flametree.h). Every
 * index is checked when the file is loaded, so flame_tree never meets a bad one; it builds the
 * nested tree from the flat list without recursion (a parent always comes before its child). */
#include "flametree.h"
#include "jsonl.h"
#include "textfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_count(const cJSON *v)
{
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 9007199254740992.0 &&
           v->valuedouble == floor(v->valuedouble);
}

static int check_frames(const cJSON *frames, char *what, size_t len)
{
    int i = 0;
    const cJSON *fr;
    cJSON_ArrayForEach(fr, frames)
    {
        const cJSON *a = NULL;
        int k = 0, ok = cJSON_IsArray(fr) && cJSON_GetArraySize(fr) == 5;
        cJSON_ArrayForEach(a, fr)
        {
            if (!ok)
                break;
            ok = k < 3 ? cJSON_IsString(a) && a->valuestring : cJSON_IsNumber(a) && (a->valueint == 0 || a->valueint == 1);
            k++;
        }
        if (!ok) {
            snprintf(what, len, "frame %d is not [name, module, source, inline 0/1, truncated 0/1]", i);
            return -1;
        }
        i++;
    }
    return 0;
}

static int check_group(const cJSON *g, int gi, int nframes, char *what, size_t len)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(g, "name");
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(g, "samples");
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(g, "nodes");
    if (!cJSON_IsObject(g) || !cJSON_IsString(name) || !name->valuestring || !is_count(samples) ||
        !cJSON_IsArray(nodes)) {
        snprintf(what, len, "group %d has no name, samples and nodes", gi);
        return -1;
    }
    int n = cJSON_GetArraySize(nodes);
    if (n % 3) {
        snprintf(what, len, "group %d: nodes is not a list of [parent, frame, samples] triples", gi);
        return -1;
    }
    int k = 0;
    double sum = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, nodes)
    {
        int node = k / 3, part = k % 3;
        int ok = cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble);
        if (ok && part == 0)
            ok = v->valuedouble >= -1 && v->valuedouble < node;
        else if (ok && part == 1)
            ok = v->valuedouble >= 0 && v->valuedouble < nframes;
        else if (ok)
            ok = is_count(v), sum += v->valuedouble;
        if (!ok) {
            snprintf(what, len, "group %d, node %d: %s out of range", gi, node,
                     part == 0 ? "parent (must be listed before its child)" : part == 1 ? "frame" : "samples");
            return -1;
        }
        k++;
    }
    if (sum != samples->valuedouble) {
        snprintf(what, len, "group %d: its nodes hold %.0f samples, not %.0f", gi, sum, samples->valuedouble);
        return -1;
    }
    return 0;
}

int flame_load(const char *path, struct flame_set **out, char *err, size_t errlen)
{
    *out = NULL;
    cJSON *doc = NULL;
    int rc = json_file_load(path, FLAME_MAX_BYTES, 1, &doc, err, errlen);
    if (rc != 0)
        return rc;
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
    const cJSON *frames = cJSON_GetObjectItemCaseSensitive(doc, "frames");
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(doc, "groups");
    char what[200] = "";
    if (!cJSON_IsString(schema) || !schema->valuestring || strcmp(schema->valuestring, FLAME_SCHEMA) != 0)
        snprintf(what, sizeof what, "not a %s document (no such \"schema\")", FLAME_SCHEMA);
    else if (!cJSON_IsArray(frames) || !cJSON_IsArray(groups))
        snprintf(what, sizeof what, "no \"frames\" and \"groups\" arrays");
    else if (check_frames(frames, what, sizeof what) == 0) {
        int gi = 0, nframes = cJSON_GetArraySize(frames);
        const cJSON *g;
        cJSON_ArrayForEach(g, groups)
        {
            if (check_group(g, gi++, nframes, what, sizeof what) != 0)
                break;
        }
    }
    struct flame_set *f = what[0] ? NULL : calloc(1, sizeof *f);
    if (!f) {
        reader_error(err, errlen, path, "%s", what[0] ? what : "out of memory");
        cJSON_Delete(doc);
        return -1;
    }
    f->doc = doc;
    f->frames = frames;
    f->nframes = cJSON_GetArraySize(frames);
    f->groups = groups;
    *out = f;
    return 0;
}

void flame_free(struct flame_set *f)
{
    if (!f)
        return;
    cJSON_Delete(f->doc);
    free(f);
}

static const cJSON *find_group(const struct flame_set *f, const char *name)
{
    const cJSON *g;
    cJSON_ArrayForEach(g, f->groups)
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(g, "name");
        if (strcmp(n->valuestring, name) == 0)
            return g;
    }
    return NULL;
}

static int by_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The smallest total a node needs to be kept so that at most budget nodes are: nodes of more
 * samples than the returned value are kept (a parent has at least its child's samples, so what is
 * kept is a tree). 0 keeps all. */
static double keep_above(const double *v, int n, size_t budget, int *oom)
{
    if (budget == 0 || (size_t)n <= budget)
        return 0;
    double *sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted) {
        *oom = 1;
        return 0;
    }
    memcpy(sorted, v, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, by_desc);
    double t = sorted[budget];
    free(sorted);
    return t;
}

cJSON *flame_tree(const struct flame_set *f, const char *name, size_t budget, int *oom)
{
    *oom = 0;
    const cJSON *g = f ? find_group(f, name) : NULL;
    if (!g)
        return NULL;
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(g, "nodes");
    int n = cJSON_GetArraySize(nodes) / 3;
    const cJSON **fr = malloc((f->nframes ? f->nframes : 1) * sizeof *fr);
    int *parent = malloc((n ? n : 1) * sizeof *parent), *frame = malloc((n ? n : 1) * sizeof *frame);
    double *v = malloc((n ? n : 1) * sizeof *v);
    cJSON **obj = calloc(n ? n : 1, sizeof *obj);
    cJSON *root = cJSON_CreateObject();
    if (!fr || !parent || !frame || !v || !obj || !root)
        goto oom;
    int k = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, f->frames) fr[k++] = x;
    k = 0;
    cJSON_ArrayForEach(x, nodes)
    {
        int i = k / 3;
        if (k % 3 == 0)
            parent[i] = x->valueint;
        else if (k % 3 == 1)
            frame[i] = x->valueint;
        else
            v[i] = x->valuedouble;
        k++;
    }
    /* totals: a child comes after its parent, so one backward pass adds each into its parent */
    double total = 0;
    for (int i = n; i-- > 0;) {
        if (parent[i] >= 0)
            v[parent[i]] += v[i];
        else
            total += v[i];
    }
    double above = keep_above(v, n, budget, oom);
    if (*oom)
        goto oom;
    int hidden = 0;
    for (int i = 0; i < n; i++)
        hidden += v[i] <= above && above > 0;
    cJSON_AddStringToObject(root, "n", name);
    cJSON_AddNumberToObject(root, "v", total);
    if (hidden) {
        cJSON_AddNumberToObject(root, "hidden", hidden);
        cJSON_AddNumberToObject(root, "min", above + 1);
    }
    cJSON *top = cJSON_AddArrayToObject(root, "c");
    for (int i = 0; i < n; i++) {
        if (above > 0 && v[i] <= above)
            continue;
        const cJSON *a = fr[frame[i]];
        cJSON *o = obj[i] = cJSON_CreateObject();
        if (!o)
            goto oom;
        cJSON_AddStringToObject(o, "n", cJSON_GetArrayItem(a, 0)->valuestring);
        cJSON_AddStringToObject(o, "m", cJSON_GetArrayItem(a, 1)->valuestring);
        const char *src = cJSON_GetArrayItem(a, 2)->valuestring;
        if (*src)
            cJSON_AddStringToObject(o, "f", src);
        cJSON_AddNumberToObject(o, "v", v[i]);
        if (cJSON_GetArrayItem(a, 3)->valueint)
            cJSON_AddNumberToObject(o, "i", 1);
        if (cJSON_GetArrayItem(a, 4)->valueint)
            cJSON_AddNumberToObject(o, "t", 1);
        cJSON *into = top;
        if (parent[i] >= 0) {
            into = cJSON_GetObjectItemCaseSensitive(obj[parent[i]], "c");
            if (!into)
                into = cJSON_AddArrayToObject(obj[parent[i]], "c");
        }
        if (!into || !cJSON_AddItemToArray(into, o)) {
            cJSON_Delete(o);
            goto oom;
        }
    }
    goto out;
oom:
    *oom = 1;
    cJSON_Delete(root);
    root = NULL;
out:
    free(fr);
    free(parent);
    free(frame);
    free(v);
    free(obj);
    return root;
}

/* a node's "v", "a", "d" raised by one stack's pair */
static int add_pair(cJSON *node, double a, double b, double dscale)
{
    static const char *const key[3] = {"v", "a", "d"};
    double add[3] = {b, a, (b - a) * dscale};
    for (int k = 0; k < 3; k++) {
        cJSON *x = cJSON_GetObjectItemCaseSensitive(node, key[k]);
        if (x)
            cJSON_SetNumberValue(x, x->valuedouble + add[k]);
        else if (!cJSON_AddNumberToObject(node, key[k], add[k]))
            return -1;
    }
    return 0;
}

/* the child of node named name[0..len), made when it has none */
static cJSON *child(cJSON *node, const char *name, size_t len)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(node, "c");
    if (!c && !(c = cJSON_AddArrayToObject(node, "c")))
        return NULL;
    cJSON *x;
    cJSON_ArrayForEach(x, c)
    {
        const char *n = cJSON_GetObjectItemCaseSensitive(x, "n")->valuestring;
        if (strlen(n) == len && memcmp(n, name, len) == 0)
            return x;
    }
    char *copy = strndup(name, len);
    x = copy ? cJSON_CreateObject() : NULL;
    if (!x || !cJSON_AddStringToObject(x, "n", copy) || !cJSON_AddItemToArray(c, x)) {
        cJSON_Delete(x);
        x = NULL;
    }
    free(copy);
    return x;
}

cJSON *flame_tree_pairs(const char *name, const char *const *stacks, const double *a, const double *b,
                        size_t n, double dscale)
{
    cJSON *root = cJSON_CreateObject();
    if (!root || !cJSON_AddStringToObject(root, "n", name) || add_pair(root, 0, 0, dscale) != 0)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        cJSON *node = root;
        if (add_pair(node, a[i], b[i], dscale) != 0)
            goto oom;
        for (const char *p = stacks[i]; *p;) {
            const char *e = strchr(p, ';');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            if (!(node = child(node, p, len)) || add_pair(node, a[i], b[i], dscale) != 0)
                goto oom;
            p = e ? e + 1 : p + len;
        }
    }
    return root;
oom:
    cJSON_Delete(root);
    return NULL;
}
