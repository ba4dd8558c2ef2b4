/* Prints every MPI_T category, control variable and performance variable
 * as the Markdown tables of docs/mpi_t.md (the test mpit_doc compares them,
 * and tests/mpit_doc.sh --update rewrites them). */
#include <mpi.h>
#include <stdio.h>

static const char *verbosity(int v)
{
    static const char *const names[] = {
        "?",         "user basic",   "user detail",   "user all",  "tuner basic", "tuner detail",
        "tuner all", "mpidev basic", "mpidev detail", "mpidev all"};
    return v >= 1 && v <= 9 ? names[v] : "?";
}

static const char *scope(int s)
{
    static const char *const names[] = {"constant", "readonly", "local", "group",
                                        "group_eq", "all",      "all_eq"};
    return s >= 0 && s <= 6 ? names[s] : "?";
}

static const char *pclass(int c)
{
    static const char *const names[] = {"state",         "level",        "size",    "percentage",
                                        "highwatermark", "lowwatermark", "counter", "aggregate",
                                        "timer",         "generic"};
    return c >= 0 && c <= 9 ? names[c] : "?";
}

static const char *type(MPI_Datatype t)
{
    return t == MPI_INT                  ? "int"
           : t == MPI_UNSIGNED_LONG      ? "unsigned long"
           : t == MPI_UNSIGNED_LONG_LONG ? "unsigned long long"
           : t == MPI_CHAR               ? "char (string)"
                                         : "?";
}

/* The category (name) that lists cvar i (cvars) or pvar i. */
static void category_of(int i, int cvars, char *out, int cap)
{
    int n;
    MPI_T_category_get_num(&n);
    snprintf(out, (size_t)cap, "-");
    for (int c = 0; c < n; c++) {
        int nc, np, idx[512];
        MPI_T_category_get_info(c, NULL, NULL, NULL, NULL, &nc, &np, NULL);
        int m = cvars ? nc : np;
        if (m > 512)
            m = 512;
        if (cvars)
            MPI_T_category_get_cvars(c, m, idx);
        else
            MPI_T_category_get_pvars(c, m, idx);
        for (int k = 0; k < m; k++)
            if (idx[k] == i) {
                int len = cap;
                MPI_T_category_get_info(c, out, &len, NULL, NULL, NULL, NULL, NULL);
                return;
            }
    }
}

int main(void)
{
    int provided, n;
    char name[256], desc[1024], cat[64];
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_category_get_num(&n);
    printf("### Categories\n\n| category | variables | subcategories | description |\n"
           "| --- | ---: | --- | --- |\n");
    for (int c = 0; c < n; c++) {
        int nl = sizeof name, dl = sizeof desc, nc, np, nk, sub[16];
        MPI_T_category_get_info(c, name, &nl, desc, &dl, &nc, &np, &nk);
        MPI_T_category_get_categories(c, 16, sub);
        printf("| %s | %d control, %d performance | ", name, nc, np);
        for (int k = 0; k < nk && k < 16; k++) {
            int len = sizeof cat;
            MPI_T_category_get_info(sub[k], cat, &len, NULL, NULL, NULL, NULL, NULL);
            printf("%s%s", k ? ", " : "", cat);
        }
        printf("%s | %s |\n", nk ? "" : "-", desc);
    }
    MPI_T_cvar_get_num(&n);
    printf("\n### Control variables\n\n| name | type | scope | verbosity | category | "
           "description |\n| --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < n; i++) {
        int nl = sizeof name, dl = sizeof desc, verb, sc;
        MPI_Datatype dt;
        MPI_T_enum e;
        MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &e, desc, &dl, NULL, &sc);
        category_of(i, 1, cat, sizeof cat);
        printf("| `%s` | ", name);
        if (e != MPI_T_ENUM_NULL) {
            int items;
            MPI_T_enum_get_info(e, &items, NULL, NULL);
            printf("enum:");
            for (int k = 0; k < items; k++) {
                char item[64];
                int len = sizeof item, value;
                MPI_T_enum_get_item(e, k, &value, item, &len);
                printf(" %s=%d", item, value);
            }
        } else {
            printf("%s", type(dt));
        }
        printf(" | %s | %s | %s | %s |\n", scope(sc), verbosity(verb), cat, desc);
    }
    MPI_T_pvar_get_num(&n);
    printf("\n### Performance variables\n\n| name | class | continuous | read-only | verbosity | "
           "category | description |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < n; i++) {
        int nl = sizeof name, dl = sizeof desc, verb, cls, ro, cont, at, bind;
        MPI_Datatype dt;
        MPI_T_enum e;
        MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &e, desc, &dl, &bind, &ro, &cont, &at);
        category_of(i, 0, cat, sizeof cat);
        printf("| `%s` | %s | %s | %s | %s | %s | %s |\n", name, pclass(cls), cont ? "yes" : "no",
               ro ? "yes" : "no", verbosity(verb), cat, desc);
    }
    MPI_T_finalize();
    return 0;
}
