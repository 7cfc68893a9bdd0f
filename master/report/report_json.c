/* report_json.c — report.json written with its history an entry at a time: the bytes of
 * json_dumps(JSON_COMPACT) of the whole report, never the whole in memory. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

int report_json_begin(report_json_stream_t *w, FILE *out, const json_t *report)
{
    *w = (report_json_stream_t){.out = out};
    if (!json_is_object(report) || json_object_get(report, "history") != NULL)
        return -1; /* "history" is the key this writes, last, as the whole report has it */
    char *head = json_dumps(report, JSON_COMPACT);
    size_t len = head != NULL ? strlen(head) : 0;
    if (len < 2 || head[len - 1] != '}') {
        free(head);
        return -1;
    }
    /* The object without its closing brace, then the history key. */
    fwrite(head, 1, len - 1, out);
    fputs(json_object_size(report) > 0 ? ",\"history\":[" : "\"history\":[", out);
    free(head);
    return ferror(out) ? -1 : 0;
}

int report_json_entry(report_json_stream_t *w, const store_history_entry_t *e)
{
    json_t *entry = store_history_entry_json(e, false);
    if (entry == NULL)
        return 0; /* the whole report leaves out an entry it cannot make, too */
    if (w->entries++ > 0)
        fputc(',', w->out);
    int rv = json_dumpf(entry, w->out, JSON_COMPACT);
    json_decref(entry);
    return rv == 0 && !ferror(w->out) ? 0 : -1;
}

int report_json_end(report_json_stream_t *w)
{
    fputs("]}", w->out);
    return ferror(w->out) ? -1 : 0;
}
