/* jsondoc.c: Python's json.load semantics over cJSON documents (see jsondoc.h). It must never
 * print and never parse by hand. */
#include "jsondoc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cJSON *json_get(const cJSON *obj, const char *key)
{
    if (!cJSON_IsObject(obj))
        return NULL;
    cJSON *found = NULL;
    for (cJSON *c = obj->child; c; c = c->next)
        if (c->string && strcmp(c->string, key) == 0)
            found = c;
    return found;
}

/* cJSON's members: the head's prev is the last member (whose next is NULL); every other
 * member's prev is the one before it. */
static int is_head(const cJSON *c)
{
    return c->prev == NULL || c->prev->next == NULL;
}

int json_first_of_name(const cJSON *item)
{
    if (!item->string || is_head(item))
        return 1;
    for (const cJSON *c = item->prev;; c = c->prev) {
        if (c->string && strcmp(c->string, item->string) == 0)
            return 0;
        if (is_head(c))
            return 1;
    }
}

int json_truthy(const cJSON *item)
{
    if (!item || cJSON_IsNull(item) || cJSON_IsFalse(item))
        return 0;
    if (cJSON_IsTrue(item))
        return 1;
    if (cJSON_IsNumber(item))
        return item->valuedouble != 0;
    if (cJSON_IsString(item))
        return item->valuestring && item->valuestring[0];
    if (cJSON_IsArray(item) || cJSON_IsObject(item))
        return item->child != NULL;
    return 1;
}

cJSON *json_number(double v)
{
    char buf[40];
    if (!isfinite(v))
        return cJSON_CreateNull();
    if (v == trunc(v) && fabs(v) < 9007199254740992.0) { /* 2^53: every whole number exact */
        snprintf(buf, sizeof buf, "%.0f", v);
    } else {
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, v);
            if (strtod(buf, NULL) == v)
                break;
        }
    }
    return cJSON_CreateRaw(buf);
}
