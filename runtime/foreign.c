/*
 * runtime/foreign.c - foreign kernels: parsing C prototypes, the registry of
 * kernels, and calling a kernel through libffi (hop_foreign_call and
 * hop_foreign_call_into, which plans use too).
 *
 * The call interface (ffi_cif) is prepared once, at registration; a call
 * only checks its operands, copies the in-out inputs into the result
 * buffers and runs ffi_call, so the functional contract of hop/foreign.h
 * (inputs are never written) holds however the kernel behaves.
 */
#include "runtime/foreign_impl.h"
#include "runtime/runtime.h"

#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>

/* ---------------------------------------------------------------- types */

const char *
hop__ctype_name(hop_dtype d)
{
    switch (d) {
    case HOP_BOOL:
        return "bool";
    case HOP_I32:
        return "int32_t";
    case HOP_I64:
        return "int64_t";
    case HOP_F32:
        return "float";
    case HOP_F64:
        return "double";
    default:
        return "?";
    }
}

/* A C type name; `void` gives HOP_DTYPE_COUNT.  False if unknown. */
static bool
ctype_from(const char *s, size_t n, hop_dtype *out)
{
    static const struct {
        const char *name;
        hop_dtype dtype;
    } names[] = {
        {"void", HOP_DTYPE_COUNT}, {"bool", HOP_BOOL},   {"_Bool", HOP_BOOL}, {"int", HOP_I32},
        {"int32_t", HOP_I32},      {"int64_t", HOP_I64}, {"float", HOP_F32},  {"double", HOP_F64},
    };
    for (size_t i = 0; i < HOP__ARRAY_LEN(names); i++) {
        if (strlen(names[i].name) == n && memcmp(names[i].name, s, n) == 0) {
            *out = names[i].dtype;
            return true;
        }
    }
    return false;
}

static ffi_type *
ffi_type_of(const hop_foreign_param *p)
{
    if (p->kind != HOP_FOREIGN_SCALAR)
        return &ffi_type_pointer;
    switch (p->dtype) {
    case HOP_BOOL:
        return &ffi_type_uint8;
    case HOP_I32:
        return &ffi_type_sint32;
    case HOP_I64:
        return &ffi_type_sint64;
    case HOP_F32:
        return &ffi_type_float;
    default:
        return &ffi_type_double;
    }
}

/* -------------------------------------------------------------- parsing */

/* Tokens: identifiers, decimal numbers and the punctuation ( ) [ ] , * + - ; */
typedef struct lexer {
    const char *src;
    size_t pos;
    /* the current token */
    const char *tok;
    size_t len;
    int col;
} lexer;

/* The column of byte pos: characters, not bytes, before it, plus one (a
 * UTF-8 continuation byte is no character of its own). */
static int
column(const char *src, size_t pos)
{
    int col = 1;
    for (size_t i = 0; i < pos; i++)
        col += ((unsigned char)src[i] & 0xC0) != 0x80;
    return col;
}

static void
next(lexer *lx)
{
    while (lx->src[lx->pos] && isspace((unsigned char)lx->src[lx->pos]))
        lx->pos++;
    lx->tok = lx->src + lx->pos;
    lx->col = column(lx->src, lx->pos);
    char c = lx->src[lx->pos];
    if (c == '\0') {
        lx->len = 0;
    } else if ((unsigned char)c >= 0x80) {
        /* One UTF-8 character, whole, so that a message quoting it is text
         * (`façade`: the token after `fa` is `ç`, not its first byte). */
        size_t n = 1;
        while (n < 4 && ((unsigned char)lx->tok[n] & 0xC0) == 0x80)
            n++;
        lx->len = n;
    } else if (isalpha((unsigned char)c) || c == '_') {
        size_t n = 1;
        while (isalnum((unsigned char)lx->tok[n]) || lx->tok[n] == '_')
            n++;
        lx->len = n;
    } else if (isdigit((unsigned char)c)) {
        size_t n = 1;
        while (isdigit((unsigned char)lx->tok[n]))
            n++;
        lx->len = n;
    } else {
        lx->len = 1;
    }
    lx->pos += lx->len;
}

static bool
is(const lexer *lx, const char *s)
{
    return lx->len == strlen(s) && memcmp(lx->tok, s, lx->len) == 0;
}

static bool
is_ident(const lexer *lx)
{
    return lx->len > 0 && (isalpha((unsigned char)lx->tok[0]) || lx->tok[0] == '_');
}

/* The current token for messages: 'x', or "the end". */
static const char *
tok_text(const lexer *lx, char *buf, size_t cap)
{
    if (lx->len == 0)
        snprintf(buf, cap, "the end");
    else if ((unsigned char)lx->tok[0] >= 0x80)
        snprintf(buf, cap, "'%.*s' (names and types are ASCII C identifiers)", (int)lx->len,
                 lx->tok);
    else
        snprintf(buf, cap, "'%.*s'", (int)(lx->len < 40 ? lx->len : 40), lx->tok);
    return buf;
}

static bool
is_type_word(const lexer *lx)
{
    hop_dtype d;
    return is(lx, "const") || ctype_from(lx->tok, lx->len, &d);
}

/* A parse error at the current token: "<who>: column C[ (parameter P)]: ...". */
static hop_status perr(const char *who, const lexer *lx, size_t param, const char *fmt, ...)
    HOP_PRINTF(4, 5);

static hop_status
perr(const char *who, const lexer *lx, size_t param, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (param)
        return hop_error(HOP_INVALID, "%s: column %d (parameter %zu): %s", who, lx->col, param,
                         what);
    return hop_error(HOP_INVALID, "%s: column %d: %s", who, lx->col, what);
}

/* `[const] T [const] [*]`: *dtype (HOP_DTYPE_COUNT for void), *ptr, *is_const. */
static hop_status
parse_type(const char *who, lexer *lx, size_t param, hop_dtype *dtype, bool *ptr, bool *cnst)
{
    char t[64];
    *cnst = false;
    *ptr = false;
    if (is(lx, "const")) {
        *cnst = true;
        next(lx);
    }
    if (!is_ident(lx))
        return perr(who, lx, param, "expected a type, got %s", tok_text(lx, t, sizeof t));
    if (!ctype_from(lx->tok, lx->len, dtype))
        return perr(who, lx, param,
                    "unknown type %s (types: void, bool, int, int32_t, int64_t, float, double)",
                    tok_text(lx, t, sizeof t));
    next(lx);
    if (is(lx, "const")) {
        *cnst = true;
        next(lx);
    }
    if (is(lx, "*")) {
        *ptr = true;
        next(lx);
        if (is(lx, "*"))
            return perr(who, lx, param, "pointers to pointers are not supported");
        if (is(lx, "const"))
            next(lx); /* `float *const y` is still a float * */
    }
    return HOP_OK;
}

static const char *
name_dup(hop__sig *sig, const lexer *lx)
{
    char *s = hop__arena_alloc(&sig->arena, lx->len + 1);
    if (s) {
        memcpy(s, lx->tok, lx->len);
        s[lx->len] = '\0';
    }
    return s;
}

/* A size expression `[n * (k + 1)]`, parsed by recursive descent into a
 * postfix program (sz) and its canonical text (spaced operators, the
 * parentheses as written).  Names must be integer parameters declared
 * before the pointer, as for C's variable-length array parameters. */
typedef struct size_parser {
    const char *who;
    lexer *lx;
    const hop__sig *sig; /* parameters 0..nparams-1 are the earlier ones */
    size_t param;        /* 1-based, for messages */
    const char *pname;   /* the pointer's name */
    hop__size *sz;
    hop__buf text;
    int depth;
} size_parser;

static hop_status
size_emit(size_parser *sp, hop__size_opk kind, int64_t v)
{
    if (sp->sz->nops == HOP__SIZE_MAXOPS)
        return perr(sp->who, sp->lx, sp->param, "the size of %s has more than %d terms", sp->pname,
                    HOP__SIZE_MAXOPS);
    sp->sz->ops[sp->sz->nops++] = (hop__size_op){kind, v};
    return HOP_OK;
}

static hop_status size_sum(size_parser *sp);

static hop_status
size_factor(size_parser *sp)
{
    lexer *lx = sp->lx;
    char t[64];
    hop_status st;
    if (is(lx, "(")) {
        if (sp->depth == 8)
            return perr(sp->who, lx, sp->param, "parentheses nested more than 8 deep");
        sp->depth++;
        hop__buf_puts(&sp->text, "(");
        next(lx);
        if ((st = size_sum(sp)) != HOP_OK)
            return st;
        if (!is(lx, ")"))
            return perr(sp->who, lx, sp->param, "expected ')' or an operator (+ - *), got %s",
                        tok_text(lx, t, sizeof t));
        hop__buf_puts(&sp->text, ")");
        next(lx);
        sp->depth--;
        return HOP_OK;
    }
    if (lx->len > 0 && isdigit((unsigned char)lx->tok[0])) {
        int64_t v = 0;
        for (size_t i = 0; i < lx->len; i++)
            if (__builtin_mul_overflow(v, 10, &v) ||
                __builtin_add_overflow(v, lx->tok[i] - '0', &v))
                return perr(sp->who, lx, sp->param, "the number %.*s does not fit in int64",
                            (int)(lx->len < 40 ? lx->len : 40), lx->tok);
        hop__buf_printf(&sp->text, "%" PRId64, v);
        next(lx);
        return size_emit(sp, HOP__SZ_NUM, v);
    }
    if (is_ident(lx) && !is_type_word(lx)) {
        const hop__sig *sig = sp->sig;
        size_t k = 0;
        while (k < sig->nparams && !(strlen(sig->params[k].name) == lx->len &&
                                     memcmp(sig->params[k].name, lx->tok, lx->len) == 0))
            k++;
        if (k == sig->nparams || sig->params[k].kind != HOP_FOREIGN_SCALAR ||
            (sig->params[k].dtype != HOP_I32 && sig->params[k].dtype != HOP_I64))
            return perr(sp->who, lx, sp->param,
                        "the size %s must name an integer parameter before %s",
                        tok_text(lx, t, sizeof t), sp->pname);
        hop__buf_puts(&sp->text, sig->params[k].name);
        next(lx);
        return size_emit(sp, HOP__SZ_PARAM, (int64_t)k);
    }
    return perr(sp->who, lx, sp->param, "expected a number, a parameter or '(', got %s",
                tok_text(lx, t, sizeof t));
}

static hop_status
size_product(size_parser *sp)
{
    hop_status st = size_factor(sp);
    while (st == HOP_OK && is(sp->lx, "*")) {
        hop__buf_puts(&sp->text, " * ");
        next(sp->lx);
        if ((st = size_factor(sp)) == HOP_OK)
            st = size_emit(sp, HOP__SZ_MUL, 0);
    }
    return st;
}

static hop_status
size_sum(size_parser *sp)
{
    hop_status st = size_product(sp);
    while (st == HOP_OK && (is(sp->lx, "+") || is(sp->lx, "-"))) {
        bool add = is(sp->lx, "+");
        hop__buf_puts(&sp->text, add ? " + " : " - ");
        next(sp->lx);
        if ((st = size_product(sp)) == HOP_OK)
            st = size_emit(sp, add ? HOP__SZ_ADD : HOP__SZ_SUB, 0);
    }
    return st;
}

/* After a parameter's name: `[]`, `[size]` or nothing.  *ptr becomes true
 * for an array; p->size and sig->sizes[i] get the size. */
static hop_status
parse_array(const char *who, lexer *lx, hop__sig *sig, hop_foreign_param *p, bool *ptr)
{
    size_t i = sig->nparams;
    char t[64];
    if (!is(lx, "["))
        return HOP_OK;
    if (*ptr)
        return perr(who, lx, i + 1, "an array of pointers is not supported");
    *ptr = true;
    next(lx);
    if (is(lx, "]")) {
        next(lx);
        return HOP_OK;
    }
    hop__size *sz = hop__arena_zalloc(&sig->arena, sizeof *sz);
    if (sz == NULL)
        return HOP_NOMEM;
    size_parser sp = {.who = who, .lx = lx, .sig = sig, .param = i + 1, .pname = p->name, .sz = sz};
    hop__buf_init(&sp.text);
    hop_status st = size_sum(&sp);
    if (st == HOP_OK && !is(lx, "]"))
        st = perr(who, lx, i + 1, "expected ']' or an operator (+ - *), got %s",
                  tok_text(lx, t, sizeof t));
    if (st != HOP_OK) {
        hop__buf_discard(&sp.text);
        return st;
    }
    next(lx);
    char *text = hop__buf_finish(&sp.text);
    if (text == NULL)
        return HOP_NOMEM;
    p->size = hop__arena_strdup(&sig->arena, text);
    hop__free(text);
    if (p->size == NULL)
        return HOP_NOMEM;
    sig->sizes[i] = sz;
    sig->sized = true;
    return HOP_OK;
}

static hop_status
parse_param(const char *who, lexer *lx, hop__sig *sig)
{
    size_t k = sig->nparams + 1;
    char t[64];
    if (sig->nparams == HOP_FOREIGN_MAX_PARAMS)
        return perr(who, lx, k, "more than %d parameters", HOP_FOREIGN_MAX_PARAMS);
    int col = lx->col;
    hop_dtype d;
    bool ptr, cnst;
    hop_status st = parse_type(who, lx, k, &d, &ptr, &cnst);
    if (st != HOP_OK)
        return st;
    if (d == HOP_DTYPE_COUNT)
        return perr(who, lx, k,
                    ptr ? "void * has no dtype; use a typed pointer such as float *"
                        : "a parameter cannot be void");
    if (!is_ident(lx) || is_type_word(lx))
        return perr(who, lx, k, "expected a parameter name, got %s", tok_text(lx, t, sizeof t));
    for (size_t i = 0; i < sig->nparams; i++)
        if (strlen(sig->params[i].name) == lx->len &&
            memcmp(sig->params[i].name, lx->tok, lx->len) == 0)
            return perr(who, lx, k, "duplicate parameter name '%s'", sig->params[i].name);
    hop_foreign_param *p = &sig->params[sig->nparams];
    if ((p->name = name_dup(sig, lx)) == NULL)
        return HOP_NOMEM;
    p->dtype = d;
    next(lx);
    if ((st = parse_array(who, lx, sig, p, &ptr)) != HOP_OK)
        return st;
    p->kind = !ptr ? HOP_FOREIGN_SCALAR : cnst ? HOP_FOREIGN_IN : HOP_FOREIGN_INOUT;
    sig->columns[sig->nparams++] = col;
    return HOP_OK;
}

const char *
hop__param_text(const hop__sig *sig, size_t i, char *buf, size_t cap)
{
    const hop_foreign_param *p = &sig->params[i];
    const char *cnst = p->kind == HOP_FOREIGN_IN ? "const " : "";
    if (p->size)
        snprintf(buf, cap, "%s%s %s[%s]", cnst, hop__ctype_name(p->dtype), p->name, p->size);
    else
        snprintf(buf, cap, "%s%s %s%s", cnst, hop__ctype_name(p->dtype),
                 p->kind == HOP_FOREIGN_SCALAR ? "" : "*", p->name);
    return buf;
}

static hop_status
parse(const char *who, const char *src, hop__sig *sig)
{
    lexer lx = {.src = src};
    char t[64];
    next(&lx);
    hop_dtype d;
    bool ptr, cnst;
    int rcol = lx.col;
    hop_status st = parse_type(who, &lx, 0, &d, &ptr, &cnst);
    if (st != HOP_OK)
        return st;
    if (ptr || (d != HOP_DTYPE_COUNT && d != HOP_I32)) {
        lx.col = rcol;
        return perr(who, &lx, 0, "the return type must be void or int (a status: non-zero fails)");
    }
    sig->returns_int = d == HOP_I32;
    if (!is_ident(&lx) || is_type_word(&lx))
        return perr(who, &lx, 0, "expected the function's name, got %s",
                    tok_text(&lx, t, sizeof t));
    if ((sig->name = name_dup(sig, &lx)) == NULL)
        return HOP_NOMEM;
    next(&lx);
    if (!is(&lx, "("))
        return perr(who, &lx, 0, "expected '(' after %s, got %s", sig->name,
                    tok_text(&lx, t, sizeof t));
    next(&lx);
    if (is(&lx, "void")) {
        /* `(void)`, unless it starts a `void *` parameter (refused below). */
        lexer peek = lx;
        next(&peek);
        if (is(&peek, ")"))
            lx = peek;
    }
    if (!is(&lx, ")")) {
        for (;;) {
            if ((st = parse_param(who, &lx, sig)) != HOP_OK)
                return st;
            if (is(&lx, ")"))
                break;
            if (!is(&lx, ","))
                return perr(who, &lx, sig->nparams,
                            "expected ',' or ')' after the parameter, got %s",
                            tok_text(&lx, t, sizeof t));
            next(&lx);
        }
    }
    next(&lx);
    if (is(&lx, ";"))
        next(&lx);
    if (lx.len != 0)
        return perr(who, &lx, 0, "unexpected %s after the signature", tok_text(&lx, t, sizeof t));
    return HOP_OK;
}

/* The canonical text: `void saxpy(int64_t n, float a, const float *x, float *y)`. */
static hop_status
make_text(hop__sig *sig)
{
    hop__buf b;
    hop__buf_init(&b);
    hop__buf_printf(&b, "%s %s(", sig->returns_int ? "int" : "void", sig->name);
    for (size_t i = 0; i < sig->nparams; i++) {
        /* Written out here, not through hop__param_text: no length limit. */
        const hop_foreign_param *p = &sig->params[i];
        hop__buf_printf(&b, "%s%s%s %s", i ? ", " : "", p->kind == HOP_FOREIGN_IN ? "const " : "",
                        hop__ctype_name(p->dtype),
                        p->size || p->kind == HOP_FOREIGN_SCALAR ? "" : "*");
        hop__buf_puts(&b, p->name);
        if (p->size)
            hop__buf_printf(&b, "[%s]", p->size);
    }
    hop__buf_puts(&b, sig->nparams ? ")" : "void)");
    char *s = hop__buf_finish(&b);
    if (s == NULL)
        return HOP_NOMEM;
    sig->text = hop__arena_strdup(&sig->arena, s);
    hop__free(s);
    return sig->text ? HOP_OK : HOP_NOMEM;
}

hop_status
hop__sig_parse(const char *who, const char *signature, hop__sig *sig)
{
    memset(sig, 0, sizeof *sig);
    hop__arena_init(&sig->arena);
    if (signature == NULL)
        return hop_error(HOP_MISUSE, "%s: NULL signature", who);
    hop_status st = parse(who, signature, sig);
    if (st == HOP_OK)
        st = make_text(sig);
    if (st == HOP_OK) {
        for (size_t i = 0; i < sig->nparams; i++)
            sig->types[i] = ffi_type_of(&sig->params[i]);
        ffi_status fs =
            ffi_prep_cif(&sig->cif, FFI_DEFAULT_ABI, (unsigned)sig->nparams,
                         sig->returns_int ? &ffi_type_sint32 : &ffi_type_void, sig->types);
        if (fs != FFI_OK)
            st = hop_error(HOP_UNSUPPORTED, "%s: libffi cannot call %s (ffi_prep_cif gave %d)", who,
                           sig->text, (int)fs);
    }
    if (st != HOP_OK)
        hop__sig_clear(sig);
    return st;
}

void
hop__sig_clear(hop__sig *sig)
{
    hop__arena_destroy(&sig->arena);
    memset(sig, 0, sizeof *sig);
}

/* ------------------------------------------------------------ registry */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static hop_foreign **kernels;
static size_t nkernels, kernels_cap;

static hop_foreign *
find_locked(const char *name)
{
    for (size_t i = 0; i < nkernels; i++)
        if (strcmp(kernels[i]->sig.name, name) == 0)
            return kernels[i];
    return NULL;
}

void
hop__foreign_release(hop_foreign *f)
{
    if (f && atomic_fetch_sub(&f->refs, 1) == 1) {
        if (f->opts.release)
            f->opts.release(f->opts.user_data);
        hop__sig_clear(&f->sig);
        hop__free(f);
    }
}

hop_foreign *
hop__foreign_acquire(const char *name)
{
    pthread_mutex_lock(&lock);
    hop_foreign *f = name ? find_locked(name) : NULL;
    if (f)
        atomic_fetch_add(&f->refs, 1);
    pthread_mutex_unlock(&lock);
    if (f == NULL)
        hop_error(HOP_NOT_FOUND, "no foreign kernel named %s is registered",
                  name ? name : "(NULL)");
    return f;
}

hop_status
hop_foreign_register(const char *signature, void *fn, const hop_foreign_options *opts,
                     const hop_foreign **out)
{
    if (out)
        *out = NULL;
    if (signature == NULL || fn == NULL)
        return hop_error(HOP_MISUSE, "hop_foreign_register: NULL %s",
                         signature == NULL ? "signature" : "function");
    hop_foreign *f = hop__calloc(1, sizeof *f);
    if (f == NULL)
        return HOP_NOMEM;
    hop_status st = hop__sig_parse("foreign signature", signature, &f->sig);
    if (st != HOP_OK) {
        hop__free(f);
        return st;
    }
    f->fn = fn;
    if (opts)
        f->opts = *opts;
    for (size_t i = 0; i < f->sig.nparams; i++)
        f->noutputs += f->sig.params[i].kind == HOP_FOREIGN_INOUT;
    atomic_init(&f->refs, 1);
    pthread_mutex_lock(&lock);
    if (find_locked(f->sig.name))
        st = hop_error(HOP_EXISTS,
                       "hop_foreign_register: a foreign kernel named %s is registered "
                       "already",
                       f->sig.name);
    else if ((st = hop__grow((void **)&kernels, &kernels_cap, nkernels + 1, sizeof *kernels)) ==
                 HOP_OK &&
             (st = hop__reglog_note(HOP__REG_KERNEL, f->sig.name)) == HOP_OK)
        kernels[nkernels++] = f; /* a library's init being loaded logs it first */
    pthread_mutex_unlock(&lock);
    if (st != HOP_OK) {
        f->opts.release = NULL; /* user_data stays the caller's */
        hop__foreign_release(f);
        return st;
    }
    if (out)
        *out = f;
    return HOP_OK;
}

hop_status
hop_foreign_unregister(const char *name)
{
    if (name == NULL)
        return hop_error(HOP_MISUSE, "hop_foreign_unregister: NULL name");
    pthread_mutex_lock(&lock);
    hop_foreign *f = NULL;
    for (size_t i = 0; i < nkernels && f == NULL; i++) {
        if (strcmp(kernels[i]->sig.name, name) == 0) {
            f = kernels[i];
            memmove(&kernels[i], &kernels[i + 1], (nkernels - i - 1) * sizeof *kernels);
            nkernels--;
        }
    }
    if (nkernels == 0) {
        /* Leak checks see the registry empty again. */
        hop__free(kernels);
        kernels = NULL;
        kernels_cap = 0;
    }
    pthread_mutex_unlock(&lock);
    if (f == NULL)
        return hop_error(HOP_NOT_FOUND,
                         "hop_foreign_unregister: no foreign kernel named %s is "
                         "registered",
                         name);
    hop__foreign_release(f);
    return HOP_OK;
}

const hop_foreign *
hop_foreign_find(const char *name)
{
    if (name == NULL) {
        hop_error(HOP_MISUSE, "hop_foreign_find: NULL name");
        return NULL;
    }
    pthread_mutex_lock(&lock);
    hop_foreign *f = find_locked(name);
    pthread_mutex_unlock(&lock);
    if (f == NULL)
        hop_error(HOP_NOT_FOUND, "hop_foreign_find: no foreign kernel named %s is registered",
                  name);
    return f;
}

const hop_foreign *
hop_foreign_acquire(const char *name)
{
    if (name == NULL) {
        hop_error(HOP_MISUSE, "hop_foreign_acquire: NULL name");
        return NULL;
    }
    return hop__foreign_acquire(name);
}

void
hop_foreign_release(const hop_foreign *f)
{
    /* The reference count is the one mutable part of a const kernel. */
    hop__foreign_release((hop_foreign *)f);
}

const char *
hop_foreign_name(const hop_foreign *f)
{
    return f ? f->sig.name : NULL;
}

const char *
hop_foreign_signature(const hop_foreign *f)
{
    return f ? f->sig.text : NULL;
}

size_t
hop_foreign_nparams(const hop_foreign *f)
{
    return f ? f->sig.nparams : 0;
}

const hop_foreign_param *
hop_foreign_param_at(const hop_foreign *f, size_t i)
{
    return f && i < f->sig.nparams ? &f->sig.params[i] : NULL;
}

size_t
hop_foreign_noutputs(const hop_foreign *f)
{
    return f ? f->noutputs : 0;
}

bool
hop_foreign_side_effects(const hop_foreign *f)
{
    return f && f->opts.side_effects;
}

bool
hop_foreign_may_fail(const hop_foreign *f)
{
    return f && (f->sig.returns_int || f->opts.check != NULL || f->sig.sized);
}

/* --------------------------------------------------------------- calls */

/* What a concrete operand is, for messages, in the words of tracing's. */
static const char *
rt_kind_text(const hop_rt_arg *a)
{
    hop_operand o = {.kind = a->kind};
    return hop_operand_kind_name(&o);
}

/* What a scalar parameter of dtype d takes, for messages. */
static const char *
scalar_want(hop_dtype d)
{
    return d == HOP_BOOL ? "a bool" : hop_dtype_is_float(d) ? "a float or an int" : "an int";
}

/* Checks operands against the signature (before anything is allocated). */
static hop_status
check_args(const hop_foreign *f, const hop_rt_arg *args, size_t nargs, size_t nouts)
{
    const hop__sig *s = &f->sig;
    if (nargs != s->nparams || (nargs && args == NULL))
        return hop_error(HOP_INVALID, "%s: takes %zu operand%s (%s), got %zu", s->name, s->nparams,
                         s->nparams == 1 ? "" : "s", s->text, nargs);
    if (nouts != f->noutputs)
        return hop_error(HOP_INVALID, "%s: gives %zu output%s (one per non-const pointer), not %zu",
                         s->name, f->noutputs, f->noutputs == 1 ? "" : "s", nouts);
    for (size_t i = 0; i < nargs; i++) {
        const hop_foreign_param *p = &s->params[i];
        const hop_rt_arg *a = &args[i];
        char pt[128]; /* the parameter's text, made only for a message */
#define PT hop__param_text(s, i, pt, sizeof pt)
        if (p->kind == HOP_FOREIGN_SCALAR) {
            bool ok = p->dtype == HOP_BOOL ? a->kind == HOP_OPND_BOOL
                      : hop_dtype_is_float(p->dtype)
                          ? a->kind == HOP_OPND_FLOAT || a->kind == HOP_OPND_INT
                          : a->kind == HOP_OPND_INT;
            if (!ok) {
                if (a->kind == HOP_OPND_TENSOR && a->u.tensor) {
                    hop__ttext tt;
                    return hop_error(
                        HOP_INVALID, "%s: parameter %zu (%s) takes %s, got a tensor %s", s->name,
                        i + 1, PT, scalar_want(p->dtype), hop__tensor_text(&tt, a->u.tensor));
                }
                return hop_error(HOP_INVALID, "%s: parameter %zu (%s) takes %s, got %s", s->name,
                                 i + 1, PT, scalar_want(p->dtype), rt_kind_text(a));
            }
            if (p->dtype == HOP_I32 && (a->u.i < INT32_MIN || a->u.i > INT32_MAX))
                return hop_error(HOP_INVALID,
                                 "%s: parameter %zu (%s) takes an int32_t, got %" PRId64, s->name,
                                 i + 1, PT, a->u.i);
            continue;
        }
        if (a->kind != HOP_OPND_TENSOR || a->u.tensor == NULL)
            return hop_error(HOP_INVALID, "%s: parameter %zu (%s) takes a tensor, got %s", s->name,
                             i + 1, PT, a->kind == HOP_OPND_TENSOR ? "NULL" : rt_kind_text(a));
        if (a->u.tensor->dtype != p->dtype) {
            hop__ttext tt;
            return hop_error(HOP_DTYPE, "%s: parameter %zu (%s) takes %s, got %s", s->name, i + 1,
                             PT, hop_dtype_name(p->dtype), hop__tensor_text(&tt, a->u.tensor));
        }
    }
    return HOP_OK;
}

#undef PT

/* A size program's value; false when it overflows int64. */
static bool
size_eval(const hop__size *sz, const int64_t *ints, int64_t *out)
{
    int64_t stack[HOP__SIZE_MAXOPS];
    size_t n = 0;
    for (size_t k = 0; k < sz->nops; k++) {
        const hop__size_op *op = &sz->ops[k];
        bool over = false;
        switch (op->kind) {
        case HOP__SZ_NUM:
            stack[n++] = op->v;
            continue;
        case HOP__SZ_PARAM:
            stack[n++] = ints[op->v];
            continue;
        case HOP__SZ_ADD:
            over = __builtin_add_overflow(stack[n - 2], stack[n - 1], &stack[n - 2]);
            break;
        case HOP__SZ_SUB:
            over = __builtin_sub_overflow(stack[n - 2], stack[n - 1], &stack[n - 2]);
            break;
        case HOP__SZ_MUL:
            over = __builtin_mul_overflow(stack[n - 2], stack[n - 1], &stack[n - 2]);
            break;
        }
        if (over)
            return false;
        n--;
    }
    *out = stack[0];
    return true;
}

uint32_t
hop__sig_size_uses(const hop__sig *sig, size_t i)
{
    uint32_t uses = 0;
    const hop__size *sz = sig->sizes[i];
    for (size_t k = 0; sz && k < sz->nops; k++)
        if (sz->ops[k].kind == HOP__SZ_PARAM)
            uses |= UINT32_C(1) << sz->ops[k].v;
    return uses;
}

hop_status
hop__sig_check_size(const hop__sig *sig, size_t i, const int64_t *ints, int64_t numel,
                    const char *desc)
{
    const hop__size *sz = sig->sizes[i];
    int64_t need = 0;
    bool ok = sz == NULL || size_eval(sz, ints, &need);
    if (ok && need <= numel)
        return HOP_OK;
    /* The parameters' values, for the message: "n = 5, m = 6". */
    char vals[256] = "", pt[160];
    size_t len = 0;
    uint32_t uses = hop__sig_size_uses(sig, i);
    for (size_t k = 0; k < sig->nparams && len < sizeof vals; k++)
        if (uses & (UINT32_C(1) << k))
            len += (size_t)snprintf(vals + len, sizeof vals - len, "%s%s = %" PRId64,
                                    len ? ", " : "", sig->params[k].name, ints[k]);
    const char *size = sig->params[i].size;
    hop__param_text(sig, i, pt, sizeof pt);
    if (!ok)
        return hop_error(HOP_SHAPE, "%s: parameter %zu (%s): the size %s overflows int64%s%s%s",
                         sig->name, i + 1, pt, size, len ? " (" : "", vals, len ? ")" : "");
    if (sz->nops == 1 && sz->ops[0].kind == HOP__SZ_NUM)
        return hop_error(HOP_SHAPE, "%s: parameter %zu (%s) needs %" PRId64 " elements, got %s",
                         sig->name, i + 1, pt, need, desc);
    if (sz->nops == 1)
        return hop_error(HOP_SHAPE, "%s: parameter %zu (%s) needs %s elements, got %s", sig->name,
                         i + 1, pt, vals, desc);
    return hop_error(HOP_SHAPE,
                     "%s: parameter %zu (%s) needs %s = %" PRId64 " elements (%s), got %s",
                     sig->name, i + 1, pt, size, need, vals, desc);
}

/* Refuses an operand shorter than its parameter's size (after check_args). */
static hop_status
check_sizes(const hop_foreign *f, const hop_rt_arg *args)
{
    const hop__sig *s = &f->sig;
    int64_t ints[HOP_FOREIGN_MAX_PARAMS];
    for (size_t k = 0; k < s->nparams; k++)
        ints[k] = args[k].kind == HOP_OPND_INT ? args[k].u.i : 0;
    for (size_t i = 0; i < s->nparams; i++) {
        if (s->sizes[i] == NULL)
            continue;
        const hop_tensor *x = args[i].u.tensor;
        hop__ttext tt;
        int64_t numel = hop_tensor_numel(x), need;
        /* The text is made only for a message. */
        if (size_eval(s->sizes[i], ints, &need) && need <= numel)
            continue;
        return hop__sig_check_size(s, i, ints, numel, hop__tensor_text(&tt, x));
    }
    return HOP_OK;
}

static hop_status
check_outs(const hop_foreign *f, const hop_rt_arg *args, hop_tensor *const *outs)
{
    const hop__sig *s = &f->sig;
    size_t j = 0;
    for (size_t i = 0; i < s->nparams; i++) {
        if (s->params[i].kind != HOP_FOREIGN_INOUT)
            continue;
        const hop_tensor *in = args[i].u.tensor, *o = outs[j];
        hop__ttext a, b;
        if (o == NULL)
            return hop_error(HOP_MISUSE, "%s: output %zu is NULL", s->name, j);
        if (o->dtype != in->dtype || !hop__same_sizes(o, in->rank, in->sizes))
            return hop_error(o->dtype != in->dtype ? HOP_DTYPE : HOP_SHAPE,
                             "%s: output %zu is %s but parameter %zu (%s) is %s", s->name, j,
                             hop__tensor_text(&a, o), i + 1, s->params[i].name,
                             hop__tensor_text(&b, in));
        if (!hop_tensor_is_contiguous(o))
            return hop_error(HOP_INVALID, "%s: output %zu (%s) is not contiguous", s->name, j,
                             hop__tensor_text(&a, o));
        j++;
    }
    return HOP_OK;
}

typedef union cval {
    uint8_t b;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    void *p;
} cval;

hop_status
hop_foreign_call_into(const hop_foreign *f, const hop_rt_arg *args, size_t nargs,
                      hop_tensor *const *outs, size_t nouts)
{
    if (f == NULL || (nouts && outs == NULL))
        return hop_error(HOP_MISUSE, "hop_foreign_call_into: NULL %s", f ? "outputs" : "kernel");
    hop_status st = check_args(f, args, nargs, nouts);
    if (st == HOP_OK)
        st = check_outs(f, args, outs);
    if (st == HOP_OK && f->sig.sized)
        st = check_sizes(f, args);
    if (st == HOP_OK && f->opts.check)
        st = f->opts.check(f->opts.user_data, f, args, nargs);
    if (st != HOP_OK)
        return st;
    const hop__sig *s = &f->sig;
    cval vals[HOP_FOREIGN_MAX_PARAMS];
    void *ptrs[HOP_FOREIGN_MAX_PARAMS];
    hop_tensor *temps[HOP_FOREIGN_MAX_PARAMS] = {NULL};
    size_t j = 0;
    for (size_t i = 0; i < s->nparams && st == HOP_OK; i++) {
        const hop_foreign_param *p = &s->params[i];
        const hop_rt_arg *a = &args[i];
        ptrs[i] = &vals[i];
        switch (p->kind) {
        case HOP_FOREIGN_SCALAR:
            if (p->dtype == HOP_BOOL)
                vals[i].b = a->u.b;
            else if (p->dtype == HOP_I32)
                vals[i].i32 = (int32_t)a->u.i;
            else if (p->dtype == HOP_I64)
                vals[i].i64 = a->u.i;
            else if (p->dtype == HOP_F32)
                vals[i].f32 = (float)(a->kind == HOP_OPND_INT ? (double)a->u.i : a->u.f);
            else
                vals[i].f64 = a->kind == HOP_OPND_INT ? (double)a->u.i : a->u.f;
            break;
        case HOP_FOREIGN_IN: {
            hop_tensor *x = a->u.tensor;
            if (!hop_tensor_is_contiguous(x)) {
                if ((temps[i] = hop_tensor_contiguous(x)) == NULL)
                    st = hop_error_code();
                else
                    x = temps[i];
            }
            vals[i].p = x->data;
            break;
        }
        case HOP_FOREIGN_INOUT: {
            hop_tensor *o = outs[j++];
            hop_tensor *in = a->u.tensor;
            bool contiguous = hop_tensor_is_contiguous(in);
            /* The usual case is a plain copy; clone handles strides (and
             * refuses overlaps) at the price of shape inference. */
            if (contiguous && in->data != o->data)
                memmove(o->data, in->data,
                        (size_t)hop_tensor_numel(in) * hop_dtype_size(in->dtype));
            else if (!contiguous)
                st = hop_eager_out(HOP_OP_clone, a, 1, o);
            vals[i].p = o->data;
            break;
        }
        }
    }
    ffi_arg rc = 0;
    if (st == HOP_OK)
        ffi_call((ffi_cif *)&s->cif, FFI_FN(f->fn), &rc, ptrs);
    for (size_t i = 0; i < s->nparams; i++)
        hop_tensor_release(temps[i]);
    if (st == HOP_OK && s->returns_int && (int32_t)rc != 0)
        st = hop_error(HOP_RUNTIME, "%s: the kernel returned %d", s->name, (int)(int32_t)rc);
    return st;
}

hop_status
hop_foreign_call(const hop_foreign *f, const hop_rt_arg *args, size_t nargs, hop_tensor **outs,
                 size_t nouts)
{
    for (size_t j = 0; outs && j < nouts; j++)
        outs[j] = NULL;
    if (f == NULL || (nouts && outs == NULL))
        return hop_error(HOP_MISUSE, "hop_foreign_call: NULL %s", f ? "outputs" : "kernel");
    hop_status st = check_args(f, args, nargs, nouts);
    size_t j = 0;
    for (size_t i = 0; st == HOP_OK && i < nargs; i++) {
        if (f->sig.params[i].kind != HOP_FOREIGN_INOUT)
            continue;
        const hop_tensor *in = args[i].u.tensor;
        if ((outs[j++] = hop_tensor_empty(in->dtype, in->rank, in->sizes)) == NULL)
            st = hop_error_code();
    }
    if (st == HOP_OK)
        st = hop_foreign_call_into(f, args, nargs, outs, nouts);
    if (st != HOP_OK) {
        for (size_t k = 0; outs && k < nouts; k++) {
            hop_tensor_release(outs[k]);
            outs[k] = NULL;
        }
    }
    return st;
}

/* -------------------------------------------- operands known by metadata */

/* What an operand is, for messages: "a tensor f32[s0]", "an int", ... */
static const char *
operand_text(const hop_operand *o, char *buf, size_t cap)
{
    if (o->kind != HOP_OPND_TENSOR || o->u.tensor == NULL)
        return hop_operand_kind_name(o);
    char m[128];
    hop_meta_print(o->u.tensor, m, sizeof m);
    snprintf(buf, cap, "a tensor %s", m);
    return buf;
}

/* int: 0, bool: 1, tensor: 2, float: 3, other: -1 (symbolic values by
 * their kind). */
static int
operand_class(const hop_operand *o)
{
    switch (o->kind) {
    case HOP_OPND_INT:
        return 0;
    case HOP_OPND_BOOL:
        return 1;
    case HOP_OPND_SYM:
        return o->u.sym ? (hop_expr_is_bool(o->u.sym) ? 1 : 0) : -1;
    case HOP_OPND_TENSOR:
        return o->u.tensor ? 2 : -1;
    case HOP_OPND_FLOAT:
        return 3;
    default:
        return -1;
    }
}

/* Checks one operand against parameter i of sig (tracing and lowering
 * share it, so a graph that lowers is one that traced). */
static hop_status
check_operand(const hop__sig *s, size_t i, const hop_operand *o)
{
    const hop_foreign_param *p = &s->params[i];
    char pt[128], at[160]; /* made only for a message */
#define PT hop__param_text(s, i, pt, sizeof pt)
    int c = operand_class(o);
    if (p->kind == HOP_FOREIGN_SCALAR) {
        bool ok = p->dtype == HOP_BOOL           ? c == 1
                  : hop_dtype_is_float(p->dtype) ? c == 0 || c == 3
                                                 : c == 0;
        if (!ok)
            return hop_error(HOP_INVALID, "%s: parameter %zu (%s) takes %s, got %s", s->name, i + 1,
                             PT, scalar_want(p->dtype), operand_text(o, at, sizeof at));
        return HOP_OK;
    }
    if (c != 2)
        return hop_error(HOP_INVALID, "%s: parameter %zu (%s) takes a tensor, got %s", s->name,
                         i + 1, PT, operand_text(o, at, sizeof at));
    const hop_meta *m = o->u.tensor;
    if (m->dtype != p->dtype) {
        char mt[128];
        hop_meta_print(m, mt, sizeof mt);
        return hop_error(HOP_DTYPE, "%s: parameter %zu (%s) takes %s, got %s", s->name, i + 1, PT,
                         hop_dtype_name(p->dtype), mt);
    }
    return HOP_OK;
}

#undef PT

_Static_assert(HOP_FOREIGN_MAX_PARAMS <= 32, "hop__sig_size_uses gives one bit per parameter");

/* An int operand's value when it is a constant. */
static bool
const_int(const hop_operand *o, int64_t *out)
{
    if (o->kind == HOP_OPND_INT) {
        *out = o->u.i;
        return true;
    }
    return o->kind == HOP_OPND_SYM && o->u.sym && hop_expr_const_value(o->u.sym, out);
}

/* A pointer's size (hop/foreign.h) checked as a call would check it, when
 * the size and the operand's sizes are constants: a call that would be
 * refused on every run is refused while tracing, with the same message.
 * Symbolic ones are checked by each call. */
static hop_status
check_operand_size(const hop__sig *s, size_t i, const hop_operand *args)
{
    int64_t ints[HOP_FOREIGN_MAX_PARAMS] = {0};
    uint32_t uses = hop__sig_size_uses(s, i);
    for (size_t k = 0; k < s->nparams; k++)
        if ((uses & (UINT32_C(1) << k)) && !const_int(&args[k], &ints[k]))
            return HOP_OK;
    const hop_meta *m = args[i].u.tensor;
    int64_t numel = 1;
    for (int d = 0; d < m->rank; d++) {
        int64_t n;
        if (!hop_expr_const_value(m->sizes[d], &n) || __builtin_mul_overflow(numel, n, &numel))
            return HOP_OK;
    }
    char mt[128];
    hop_meta_print(m, mt, sizeof mt);
    return hop__sig_check_size(s, i, ints, numel, mt);
}

hop_status
hop_foreign_check_operands(const hop_foreign *f, const hop_operand *args, size_t nargs)
{
    if (f == NULL)
        return hop_error(HOP_MISUSE, "hop_foreign_check_operands: NULL kernel");
    const hop__sig *s = &f->sig;
    if (nargs != s->nparams || (nargs && args == NULL))
        return hop_error(HOP_INVALID, "%s: takes %zu operand%s (%s), got %zu", s->name, s->nparams,
                         s->nparams == 1 ? "" : "s", s->text, nargs);
    for (size_t i = 0; i < nargs; i++) {
        hop_status st = check_operand(s, i, &args[i]);
        if (st != HOP_OK)
            return st;
    }
    for (size_t i = 0; s->sized && i < nargs; i++) {
        hop_status st = s->sizes[i] ? check_operand_size(s, i, args) : HOP_OK;
        if (st != HOP_OK)
            return st;
    }
    return HOP_OK;
}
