int shared_arrive(int round);
int shared_count(int round);
int shared_note_ctor(void);
int shared_ctor_runs(void);
