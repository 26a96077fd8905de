/*
 * journal_internal.h: private to the journal module (journal.c opens and
 * reads the file, lock.c locks it, frame.c checks a line's checksum,
 * decode.c decodes its lines, records.c keeps and indexes the records,
 * journal_write.c formats and appends).
 */
#ifndef FS_JOURNAL_INTERNAL_H
#define FS_JOURNAL_INTERNAL_H

#include "journal/journal.h"
#include "json/json.h"

double journal_wall_time(void);
/* lock.c: j->path opened (created if absent) and locked for journal_open,
 * the holder's note written (j->fd, created, was_held set); 0, or -1 with
 * err naming the holder when another process has it. */
int journal_lock(FsJournal *j, const char *dir, FsErr *err);
/* Before the lock goes (journal_close): the holder's note is removed unless
 * keep_note (an empty journal keeps it: see lock.c). */
void journal_unlock(FsJournal *j, int keep_note);
/* The holder's note beside the journal at path: written by whoever takes
 * the lock (*held: a note was there already), removed before letting go. */
void journal_note_write(const char *journal, int *held);
void journal_note_remove(const char *journal);
/* Reads a whole file (malloc'd); 0 or -1 with errno. */
int journal_read_fd(int fd, char **out, size_t *n);
/* frame.c: a line's checksum, the "crc" member last in its object (the
 * form is described there). journal_frame: w holds one record's JSON
 * object, still open; it gets its "crc" member, its closing brace and the
 * newline. */
void journal_frame(FsJsonOut *w);
/* One line without its newline, in the current form or an earlier
 * build's "JSON #crc": LINE_OK with *json_n the bytes of the JSON to parse
 * from s, or LINE_CORRUPT with why. */
int journal_unframe(const char *s, size_t n, size_t *json_n, char *why, size_t why_n);
/* journal_decode_line's verdicts: a good record; a line that is not a
 * whole record (torn, bad checksum, bad JSON: dropped when it is the last
 * line); a whole record that is not understood (always an error). */
enum { LINE_OK = 0, LINE_CORRUPT = -1, LINE_INVALID = -2 };
/* One line without its newline: decodes it and adds its record to j.
 * Returns LINE_OK, or LINE_CORRUPT / LINE_INVALID with why. */
int journal_decode_line(FsJournal *j, const char *s, size_t n, char *why, size_t why_n);
/* One line without its newline: 0 if it is a good record (added to
 * scratch, as on load), else -1 with why. */
int journal_check_line(FsJournal *scratch, const char *s, size_t n, char *why, size_t why_n);
/* The JSON of a fold record, its object left open for journal_frame. */
void journal_fold_json(FsJsonOut *w, const char *trial, int fold, int seed, const FsFitResult *r, const FsModelRef *model,
                       double t);
/* "model":{"file":...,"bytes":N,"crc32":"8hex"}, a member of the record. */
void journal_model_json(FsJsonOut *w, const FsModelRef *m);

/* sense.c: the checks of journal_set_sweep. Each returns 0 when c is NULL
 * or the record fits the sweep, else -1 with why ("expected ..."). */
FsJournalCheck *journal_check_new(const FsJournalSweep *s);
void journal_check_free(FsJournalCheck *c);
/* The text of the journal's first sweep version (NULL: none), to which the
 * records before any sweep record belong. */
void journal_check_first_version(FsJournalCheck *c, const char *first);
/* 1 when the records being read now (after the latest sweep record read)
 * were written under the checked sweep, or no sweep text is checked; 0
 * for an earlier version's (an extended run): their trial index and
 * pruner rule are not judged. */
int journal_sense_current(const FsJournal *j);
/* index: the trial record's, or -1 for records that name the trial only. */
int journal_sense_trial(const FsJournalCheck *c, const char *trial, int index, char *why, size_t n);
int journal_sense_fold_id(const FsJournalCheck *c, int fold, char *why, size_t n);
/* has_curves: the record carried its curves (Q3 and loss are checked). */
int journal_sense_fold(const FsJournalCheck *c, int fold, const FsFitResult *r, int has_curves, char *why, size_t n);
int journal_sense_cut(const FsJournalCheck *c, const FsCutRecord *cut, char *why, size_t n);
/* The latest sweep record (copies). */
void journal_set_sweep_record(FsJournal *j, const char *text, const uint64_t *val, int n_val);

/* In-memory bookkeeping after a record is read or appended. Each keeps the
 * first record of a key: returns 1 if added, 0 if it was a duplicate. */
int journal_add_trial(FsJournal *j, const char *trial, int index, long n_params, const char *config,
                      double t);
int journal_add_fold(FsJournal *j, const char *trial, int fold, int seed, const FsFitResult *r, double t);
int journal_add_failure(FsJournal *j, const char *trial, const char *message, double t);
void journal_add_run(FsJournal *j, const FsRunRecord *run);
/* Sets the model of a recorded fold (0), or -1 if the fold is not recorded. */
int journal_set_model(FsJournal *j, const char *trial, int fold, const FsModelRef *m);
void journal_add_discard(FsJournal *j, const char *trial);
void journal_add_eval(FsJournal *j, const FsEvalRecord *e);
void journal_add_refit(FsJournal *j, const FsRefitRecord *r);
/* Takes a copy of c's curve. */
void journal_add_cut(FsJournal *j, const FsCutRecord *c);

#endif
