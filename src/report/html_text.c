/*
 * html_text.c: the HTML report's text helpers. Every string that comes from
 * a file (paths, configs, host names, failure messages) reaches the page
 * through html_esc: markup characters become entities and bytes that are
 * not UTF-8 become U+FFFD, so no file name can add an element or a script.
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "report/html_int.h"

/* Length of the valid UTF-8 sequence at s (2..4), or 0. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    int n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) || (c == 0xF0 && s[1] < 0x90) ||
        (c == 0xF4 && s[1] > 0x8F))
        return 0; /* overlong, surrogate, past U+10FFFF */
    return n;
}

void html_esc(FILE *out, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    while (*s) {
        unsigned c = *s;
        if (c == '&') fputs("&amp;", out);
        else if (c == '<') fputs("&lt;", out);
        else if (c == '>') fputs("&gt;", out);
        else if (c == '"') fputs("&quot;", out);
        else if (c == '\'') fputs("&#39;", out);
        else if (c < 0x20 && c != '\n' && c != '\t') fputs("\xEF\xBF\xBD", out);
        else if (c < 0x80) fputc((int)c, out);
        else {
            int n = utf8_len(s);
            if (n) {
                fwrite(s, 1, (size_t)n, out);
                s += n;
                continue;
            }
            fputs("\xEF\xBF\xBD", out);
        }
        s++;
    }
}

void html_esc_cut(FILE *out, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max) {
        html_esc(out, s);
        return;
    }
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80) max--;
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(max < sizeof buf - 1 ? max : sizeof buf - 1), s);
    html_esc(out, buf);
    fputs("&#x2026;", out);
}

void html_num(FILE *out, const char *fmt, double v, double scale)
{
    if (isnan(v)) fputs("-", out);
    else fprintf(out, fmt, v * scale);
}

void html_pct(FILE *out, double fraction) { fputs(fs_percent_text(fraction), out); }

void html_time(char *buf, size_t n, double t)
{
    time_t s = (time_t)t;
    struct tm tm;
    if (t <= 0 || !gmtime_r(&s, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S UTC", &tm)) snprintf(buf, n, "?");
}

void html_no_chart(FILE *out, const char *why)
{
    fputs("<p class=\"nochart\">", out);
    html_esc(out, why);
    fputs("</p>\n", out);
}
