/* jsondoc.h: the lookups that give a JSON document (run.json, a noise file, matrix.json, read
 * with json_file_load of format/jsonl.h) Python's json.load semantics: the last of duplicate
 * keys wins, truthiness as Python's. It must never parse by hand. */
#ifndef PERFSCOPE_JSONDOC_H
#define PERFSCOPE_JSONDOC_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* obj[key] as Python's dict holds it after json.load: the last member of that exact
 * (case-sensitive) name; NULL if obj is not an object or has none. */
cJSON *json_get(const cJSON *obj, const char *key);

/* Whether item, a member of its object, is the first of its name there: iterating the members
 * and skipping the others visits the keys in Python's dict order. Quadratic in the members:
 * for small objects (callers bound them). */
int json_first_of_name(const cJSON *item);

/* Python's bool() of the value json.load would give: null, false, 0, "", [] and {} are false;
 * NULL (absent) is false too. */
int json_truthy(const cJSON *item);

/* A number item that prints the shortest text that reads back as exactly v (cJSON's own
 * printing may drop the last digit); whole numbers print without a point; NaN and infinities,
 * which JSON lacks, print null. NULL when out of memory. */
cJSON *json_number(double v);

#endif
