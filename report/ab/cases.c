/* cases.c: the cases file reader (cases.h). It must never parse JSON by hand, never accept a
 * member of a type compare.py would choke on (beyond the numbers it takes for strings), and
 * never leave a half-built case list behind on error. */
#include "cases.h"
#include "jsonl.h"
#include "textfile.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A string, or a whole number as Python's str(int); NULL otherwise (or out of memory). */
static char *text_of(const cJSON *v)
{
    if (cJSON_IsString(v) && v->valuestring)
        return strdup(v->valuestring);
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && fabs(v->valuedouble) < 1e15) {
        char buf[64];
        if (v->valuedouble == floor(v->valuedouble))
            snprintf(buf, sizeof buf, "%.0f", v->valuedouble);
        else
            snprintf(buf, sizeof buf, "%.17g", v->valuedouble);
        return strdup(buf);
    }
    return NULL;
}

static const cJSON *member(const cJSON *case_obj, const cJSON *defaults, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(case_obj, key);
    if (!v && defaults)
        v = cJSON_GetObjectItemCaseSensitive(defaults, key);
    return v;
}

/* Appends the strings of array arr to *list (NULL-terminated). 0, or -1 with what in err. */
static int add_list(char ***list, size_t *n, const cJSON *arr, const char *what, char *err,
                    size_t errlen)
{
    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr)) {
        snprintf(err, errlen, "%s is not a list", what);
        return -1;
    }
    size_t more = (size_t)cJSON_GetArraySize(arr);
    if (*n + more > CASES_MAX_ARGS) {
        snprintf(err, errlen, "%s: more than %d arguments", what, CASES_MAX_ARGS);
        return -1;
    }
    char **l = realloc(*list, (*n + more + 1) * sizeof *l);
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *list = l;
    const cJSON *v;
    cJSON_ArrayForEach(v, arr)
    {
        char *s = text_of(v);
        if (!s) {
            l[*n] = NULL;
            snprintf(err, errlen, "%s holds a value that is not a string", what);
            return -1;
        }
        l[(*n)++] = s;
    }
    l[*n] = NULL;
    return 0;
}

static int set_env(struct mcase *c, const char *key, char *value)
{
    for (size_t i = 0; i < c->nenv; i++)
        if (strcmp(c->env[i].key, key) == 0) {
            free(c->env[i].value);
            c->env[i].value = value;
            return 0;
        }
    struct kv *e = realloc(c->env, (c->nenv + 1) * sizeof *e);
    char *k = strdup(key);
    if (!e || !k) {
        if (e)
            c->env = e;
        free(k);
        free(value);
        return -1;
    }
    c->env = e;
    c->env[c->nenv].key = k;
    c->env[c->nenv].value = value;
    c->nenv++;
    return 0;
}

static int add_env(struct mcase *c, const cJSON *obj, const char *what, char *err, size_t errlen)
{
    if (!obj)
        return 0;
    if (!cJSON_IsObject(obj)) {
        snprintf(err, errlen, "%s is not an object", what);
        return -1;
    }
    const cJSON *v;
    cJSON_ArrayForEach(v, obj)
    {
        char *s = text_of(v);
        if (!s || !v->string || !v->string[0] || strchr(v->string, '=')) {
            free(s);
            snprintf(err, errlen, "%s: bad variable %s", what, v->string ? v->string : "?");
            return -1;
        }
        if (c->nenv >= CASES_MAX_ARGS || set_env(c, v->string, s) != 0) {
            snprintf(err, errlen, "%s: too many variables or out of memory", what);
            return -1;
        }
    }
    return 0;
}

static int optional_text(const cJSON *v, char **out, const char *what, char *err, size_t errlen)
{
    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!(*out = text_of(v))) {
        snprintf(err, errlen, "%s is not a string", what);
        return -1;
    }
    return 0;
}

static int build_case(struct mcase *c, const cJSON *obj, const cJSON *defaults, size_t index,
                      char *err, size_t errlen)
{
    char what[96];
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(obj, "label");
    if (!cJSON_IsObject(obj) || !cJSON_IsString(label) || !label->valuestring) {
        snprintf(err, errlen, "case %zu: %s", index + 1,
                 cJSON_IsObject(obj) ? "no string \"label\"" : "not an object");
        return -1;
    }
    c->label = strdup(label->valuestring);
    const cJSON *binary = member(obj, defaults, "binary");
    if (binary && !cJSON_IsString(binary)) {
        snprintf(err, errlen, "case %s: binary is not a string", label->valuestring);
        return -1;
    }
    c->binary = strdup(binary ? binary->valuestring : "llama-bench");
    if (!c->label || !c->binary) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(what, sizeof what, "case %.60s: prefix", c->label);
    if (add_list(&c->prefix, &c->nprefix, member(obj, defaults, "prefix"), what, err, errlen))
        return -1;
    snprintf(what, sizeof what, "defaults: args");
    if (defaults && add_list(&c->args, &c->nargs, cJSON_GetObjectItemCaseSensitive(defaults, "args"),
                             what, err, errlen))
        return -1;
    snprintf(what, sizeof what, "case %.60s: args", c->label);
    if (add_list(&c->args, &c->nargs, cJSON_GetObjectItemCaseSensitive(obj, "args"), what, err,
                 errlen))
        return -1;
    if (defaults && add_env(c, cJSON_GetObjectItemCaseSensitive(defaults, "env"), "defaults: env",
                            err, errlen))
        return -1;
    snprintf(what, sizeof what, "case %.60s: env", c->label);
    if (add_env(c, cJSON_GetObjectItemCaseSensitive(obj, "env"), what, err, errlen))
        return -1;
    snprintf(what, sizeof what, "case %.60s: model", c->label);
    if (optional_text(cJSON_GetObjectItemCaseSensitive(obj, "model"), &c->model, what, err, errlen))
        return -1;
    snprintf(what, sizeof what, "case %.60s: gpus", c->label);
    return optional_text(cJSON_GetObjectItemCaseSensitive(obj, "gpus"), &c->gpus, what, err, errlen);
}

int cases_load(const char *path, struct cases *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    cJSON *spec;
    if (json_file_load(path, CASES_MAX_BYTES, 0, &spec, err, errlen) != 0)
        return -1;
    const cJSON *defaults = cJSON_GetObjectItemCaseSensitive(spec, "defaults");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, "cases");
    char why[512] = "";
    if (defaults && !cJSON_IsObject(defaults))
        snprintf(why, sizeof why, "\"defaults\" is not an object");
    else if (!cJSON_IsArray(list))
        snprintf(why, sizeof why, "no \"cases\" list");
    else if (cJSON_GetArraySize(list) > CASES_MAX)
        snprintf(why, sizeof why, "more than %d cases", CASES_MAX);
    if (why[0]) {
        reader_error(err, errlen, path, "%s", why);
        cJSON_Delete(spec);
        return -1;
    }
    size_t n = (size_t)cJSON_GetArraySize(list);
    out->v = calloc(n ? n : 1, sizeof *out->v);
    if (!out->v) {
        reader_error(err, errlen, path, "out of memory");
        cJSON_Delete(spec);
        return -1;
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, list)
    {
        size_t i = out->n++;
        if (build_case(&out->v[i], c, defaults, i, why, sizeof why) != 0) {
            reader_error(err, errlen, path, "%s", why);
            cJSON_Delete(spec);
            cases_free(out);
            return -1;
        }
    }
    cJSON_Delete(spec);
    return 0;
}

static void free_list(char **l)
{
    for (size_t i = 0; l && l[i]; i++)
        free(l[i]);
    free(l);
}

void cases_free(struct cases *c)
{
    for (size_t i = 0; c->v && i < c->n; i++) {
        struct mcase *m = &c->v[i];
        free(m->label);
        free(m->binary);
        free_list(m->prefix);
        free_list(m->args);
        for (size_t k = 0; k < m->nenv; k++) {
            free(m->env[k].key);
            free(m->env[k].value);
        }
        free(m->env);
        free(m->model);
        free(m->gpus);
    }
    free(c->v);
    memset(c, 0, sizeof *c);
}
