#!/usr/bin/env python3
"""Generates the RPC marshalling of p11glue from the call list.

Usage: gen-rpc.py CALLS_H PKCS11_H OUTDIR

Reads every X(name, (params), (args), kind) of src/common/pkcs11-calls.h and
deduces each parameter's wire form from its type and the parameter that
follows it (pointer + CK_ULONG length is an input buffer, pointer +
CK_ULONG_PTR an output buffer with PKCS#11's size-query semantics, ...).
Writes, into OUTDIR:
  rpc-calls.h   the call codes (PG_RPC_CALL_<name>) and names
  rpc-client.inc  client stubs  rc_<name>(...)   (included by src/client)
  rpc-server.inc  server handlers rs_<name>(...) and their table
  rpc-mechs.inc   which mechanism takes which parameter structure
The few calls with semantics of their own are written by hand on each
side (listed in CLIENT_HAND and SERVER_HAND). Standard library only.
"""
import re
import sys

CLIENT_HAND = {
    'C_Initialize', 'C_Finalize', 'C_GetFunctionList', 'C_GetInterfaceList',
    'C_GetInterface', 'C_GetInfo', 'C_GetSlotList', 'C_OpenSession', 'C_CloseSession',
    'C_CloseAllSessions', 'C_GetAttributeValue', 'C_WaitForSlotEvent',
}
SERVER_HAND = {
    'C_Initialize', 'C_Finalize', 'C_GetFunctionList', 'C_GetInterfaceList',
    'C_GetInterface', 'C_GetSlotList', 'C_OpenSession', 'C_GetAttributeValue',
    'C_WaitForSlotEvent',
}
SCALAR = {'CK_SESSION_HANDLE', 'CK_SLOT_ID', 'CK_OBJECT_HANDLE', 'CK_ULONG', 'CK_FLAGS',
          'CK_USER_TYPE', 'CK_MECHANISM_TYPE'}
INFO = {'CK_INFO_PTR': 'info', 'CK_SLOT_INFO_PTR': 'slot_info',
        'CK_TOKEN_INFO_PTR': 'token_info', 'CK_SESSION_INFO_PTR': 'session_info',
        'CK_MECHANISM_INFO_PTR': 'mechanism_info'}
INFO_TYPE = {'CK_INFO_PTR': 'CK_INFO', 'CK_SLOT_INFO_PTR': 'CK_SLOT_INFO',
             'CK_TOKEN_INFO_PTR': 'CK_TOKEN_INFO', 'CK_SESSION_INFO_PTR': 'CK_SESSION_INFO',
             'CK_MECHANISM_INFO_PTR': 'CK_MECHANISM_INFO'}
BYTES = {'CK_BYTE_PTR', 'CK_UTF8CHAR_PTR', 'CK_VOID_PTR'}


def parse_calls(text):
    calls = []
    for m in re.finditer(r'X\((C_\w+), \(([^)]*)\), \(([^)]*)\), (\w+)\)', text):
        name, params, _, kind = m.groups()
        ps = []
        for p in params.split(','):
            t, n = p.strip().rsplit(' ', 1)
            ps.append((t, n))
        calls.append((name, ps, kind))
    return calls


def wire_args(name, ps):
    """Groups parameters into (form, names...) tuples."""
    out = []
    i = 0
    while i < len(ps):
        t, n = ps[i]
        nt = ps[i + 1][0] if i + 1 < len(ps) else None
        if i == 0 and t == 'CK_SESSION_HANDLE':
            out.append(('session', n))
        elif t in SCALAR:
            out.append(('ulong', n))
        elif t == 'CK_BBOOL':
            out.append(('u8', n))
        elif name == 'C_GenerateRandom' and t == 'CK_BYTE_PTR':
            out.append(('out_fixed', n, ps[i + 1][1]))
            i += 1
        elif t == 'CK_VOID_PTR' and n == 'pParameter':
            out.append(('msg_param', n, ps[i + 1][1]))
            i += 1
        elif t in BYTES and nt == 'CK_ULONG':
            out.append(('in_bytes', n, ps[i + 1][1]))
            i += 1
        elif t in BYTES and nt == 'CK_ULONG_PTR':
            out.append(('out_bytes', n, ps[i + 1][1]))
            i += 1
        elif t == 'CK_UTF8CHAR_PTR' and n == 'pLabel':
            out.append(('label32', n))
        elif t == 'CK_ATTRIBUTE_PTR' and nt == 'CK_ULONG':
            out.append(('template', n, ps[i + 1][1]))
            i += 1
        elif t == 'CK_MECHANISM_PTR':
            out.append(('mechanism', n))
        elif t == 'CK_OBJECT_HANDLE_PTR' and nt == 'CK_ULONG':
            out.append(('out_handles', n, ps[i + 1][1], ps[i + 2][1]))
            i += 2
        elif t == 'CK_OBJECT_HANDLE_PTR':
            out.append(('out_handle', n))
        elif t in ('CK_SLOT_ID_PTR', 'CK_MECHANISM_TYPE_PTR') and nt == 'CK_ULONG_PTR':
            out.append(('out_ulongs', n, ps[i + 1][1]))
            i += 1
        elif t in INFO:
            out.append(('out_info', n, t))
        elif t == 'CK_ULONG_PTR':
            out.append(('out_ulong', n))
        else:
            raise SystemExit('gen-rpc: %s: no wire form for %s %s' % (name, t, n))
        i += 1
    return out


def msg_kind(name):
    for k, word in enumerate(('Encrypt', 'Decrypt', 'Sign', 'Verify')):
        if word in name:
            return k
    raise SystemExit('gen-rpc: %s: no message kind' % name)


def output_lines(L, args, on_ok, on_small, extra=()):
    """Appends the lines that move a call's outputs: on_ok(arg) gives the
    lines of one output of a successful call, extra follows them, and
    on_small (a format of the arg) each size of a call that answered
    CKR_BUFFER_TOO_SMALL."""
    outs = [a for a in args if a[0].startswith('out_') or a[0] == 'msg_param']
    if not outs:
        return
    L.append('\tif (rv == CKR_OK) {')
    for a in outs:
        L.extend('\t\t' + line for line in on_ok(a))
    L.extend(extra)
    L.append('\t}')
    sized = [a for a in outs if a[0] in ('out_bytes', 'out_ulongs')]
    if sized:
        L.append('\tif (rv == CKR_BUFFER_TOO_SMALL) {')
        for a in sized:
            L.append('\t\t' + on_small.format(*a))
        L.append('\t}')


def client_stub(name, ps, kind, v3):
    args = wire_args(name, ps)
    params = ', '.join('%s %s' % p for p in ps)
    L = ['static CK_RV', 'rc_%s(%s)' % (name, params), '{', '\trc_call call;', '\tCK_RV rv;', '']
    # Required output pointers are checked here: a NULL one cannot
    # receive what the server sends.
    req = []
    for a in args:
        if a[0] in ('out_bytes', 'out_ulongs'):
            req.append(a[2])
        elif a[0] in ('out_handle', 'out_info', 'out_ulong'):
            req.append(a[1])
        elif a[0] == 'out_handles':
            req += [a[1], a[3]]
    if req:
        L.append('\tif (%s)' % ' || '.join('%s == NULL' % r for r in req))
        L.append('\t\treturn CKR_ARGUMENTS_BAD;')
    L.append('\trv = rc_begin(&call, PG_RPC_CALL_%s, RC_%s);' % (name, kind))
    L.append('\tif (rv != CKR_OK)')
    L.append('\t\treturn rv;')
    for a in args:
        f = a[0]
        if f == 'session':
            L.append('\trc_add_session(&call, %s);' % a[1])
        elif f == 'ulong':
            L.append('\tpg_rpc_add_u64(&call.out, %s);' % a[1])
        elif f == 'u8':
            L.append('\tpg_rpc_add_u8(&call.out, %s);' % a[1])
        elif f == 'in_bytes':
            L.append('\tpg_rpc_add_in_bytes(&call.out, %s, %s);' % (a[1], a[2]))
        elif f == 'msg_param':
            L.append('\tpg_rpc_add_msg_param(&call.out, call.msg_mech[%d], %s, %s);'
                     % (msg_kind(name), a[1], a[2]))
        elif f == 'out_bytes':
            L.append('\trc_add_out_bytes(&call, %s, %s);' % (a[1], a[2]))
        elif f == 'out_fixed':
            L.append('\trc_add_out_bytes(&call, %s, &%s);' % (a[1], a[2]))
        elif f == 'label32':
            L.append('\trc_add_label(&call, %s);' % a[1])
        elif f == 'template':
            L.append('\tpg_rpc_add_template(&call.out, %s, %s);' % (a[1], a[2]))
        elif f == 'mechanism':
            L.append('\tpg_rpc_add_mechanism(&call.out, %s);' % a[1])
        elif f == 'out_handles':
            L.append('\tpg_rpc_add_u64(&call.out, %s);' % a[2])
        elif f == 'out_ulongs':
            L.append('\trc_add_out_ulongs(&call, %s, %s);' % (a[1], a[2]))
    L.append('\trv = rc_run(&call);')
    def got(a):
        f = a[0]
        if f == 'msg_param':
            return ['if (!pg_rpc_get_msg_param_result(&call.in, call.msg_mech[%d], %s, %s))'
                    % (msg_kind(name), a[1], a[2]), '\tcall.in.failed = true;']
        return [{
            'out_bytes': 'rc_get_out_bytes(&call, {1}, {2});',
            'out_fixed': 'rc_get_out_fixed(&call, {1}, {2});',
            'out_handle': '*{1} = pg_rpc_get_ulong(&call.in);',
            'out_ulong': '*{1} = pg_rpc_get_ulong(&call.in);',
            'out_handles': 'rc_get_handles(&call, {1}, {2}, {3});',
            'out_ulongs': 'rc_get_out_ulongs(&call, {1}, {2});',
            'out_info': 'pg_rpc_get_{info}(&call.in, {1});',
        }[f].format(*a, info=INFO.get(a[2], '') if f == 'out_info' else '')]
    output_lines(L, args, got, '*{2} = pg_rpc_get_ulong(&call.in);')
    if name == 'C_DeriveKey':
        L.append('\tif (rv == CKR_OK && !pg_rpc_get_mechanism_result(&call.in, pMechanism))')
        L.append('\t\tcall.in.failed = true;')
    m = re.match(r'C_Message(Encrypt|Decrypt|Sign|Verify)Init$', name)
    if m:
        L.append('\tif (rv == CKR_OK && !call.in.failed)')
        L.append('\t\trc_set_msg_mech(&call, %d, %s);' % (msg_kind(name), 'pMechanism'))
    L.append('\treturn rc_end(&call, rv);')
    L.append('}')
    return '\n'.join(L) + '\n'


def server_handler(name, ps, kind, v3):
    args = wire_args(name, ps)
    L = ['static bool', 'rs_%s(rs_ctx *ctx, pg_rpc_in *in, pg_rpc_out *out)' % name, '{']
    decl = []
    for t, n in ps:
        if t == 'CK_ULONG_PTR':
            decl.append('\tCK_ULONG %s_value = 0, *%s = &%s_value;' % (n, n, n))
        elif t in INFO:
            # Zeroed: a module that leaves a field unset sends no stack bytes.
            decl.append('\t%s %s_value = { 0 }, *%s = &%s_value;' % (INFO_TYPE[t], n, n, n))
        elif t == 'CK_OBJECT_HANDLE_PTR':
            decl.append('\tCK_OBJECT_HANDLE %s_value = 0, *%s = &%s_value;' % (n, n, n))
        elif t.endswith('_PTR'):
            decl.append('\t%s %s = NULL;' % (t, n))
        else:
            decl.append('\t%s %s = 0;' % (t, n))
    L += decl
    if any(a[0] == 'msg_param' for a in args):
        L.append('\tint param_kind = 0;')
    L.append('\tCK_RV rv;')
    L.append('')
    for a in args:
        f = a[0]
        if f in ('session', 'ulong'):
            L.append('\t%s = pg_rpc_get_ulong(in);' % a[1])
        elif f == 'u8':
            L.append('\t%s = pg_rpc_get_u8(in);' % a[1])
        elif f == 'in_bytes':
            L.append('\tpg_rpc_get_in_bytes(in, (const unsigned char **)&%s, &%s);' % (a[1], a[2]))
        elif f == 'msg_param':
            L.append('\tif (!pg_rpc_get_msg_param(in, &ctx->arena, &%s, &%s, &param_kind))'
                     % (a[1], a[2]))
            L.append('\t\treturn false;')
        elif f == 'out_bytes':
            L.append('\t%s = rs_get_out_bytes(ctx, in, %s);' % (a[1], a[2]))
        elif f == 'out_fixed':
            L.append('\t%s = rs_get_out_bytes(ctx, in, &%s);' % (a[1], a[2]))
        elif f == 'label32':
            L.append('\t%s = rs_get_label(in);' % a[1])
        elif f == 'template':
            L.append('\tif (!pg_rpc_get_template(in, &ctx->arena, &%s, &%s))' % (a[1], a[2]))
            L.append('\t\treturn false;')
        elif f == 'mechanism':
            L.append('\tif (!pg_rpc_get_mechanism(in, &ctx->arena, &%s))' % a[1])
            L.append('\t\treturn false;')
        elif f == 'out_handles':
            L.append('\t%s = pg_rpc_get_ulong(in);' % a[2])
            L.append('\t(void)%s_value;' % a[1])
            L.append('\t%s = rs_alloc_ulongs(ctx, in, %s);' % (a[1], a[2]))
        elif f == 'out_ulongs':
            L.append('\t%s = rs_get_out_ulongs(ctx, in, %s);' % (a[1], a[2]))
    L.append('\tif (!pg_rpc_in_done(in))')
    L.append('\t\treturn false;')
    call = '%s(%s)' % (name, ', '.join(n for _, n in ps))
    conds = []
    if v3:
        conds.append(('!ctx->v3', 'CKR_FUNCTION_NOT_SUPPORTED'))
    if kind == 'SLOT' or kind == 'CLOSE_ALL':
        conds.append(('!rs_slot_allowed(ctx, slotID)', 'CKR_SLOT_ID_INVALID'))
    first = True
    for c, r in conds:
        L.append('\t%sif (%s)' % ('' if first else 'else ', c))
        L.append('\t\trv = %s;' % r)
        first = False
    if conds:
        L.append('\telse')
        L.append('\t\trv = ctx->funcs->%s;' % call)
    else:
        L.append('\trv = ctx->funcs->%s;' % call)
    if kind == 'INFO':
        L.append('\tif (rv == CKR_OK && !rs_slot_allowed(ctx, pInfo->slotID))')
        L.append('\t\trv = CKR_SESSION_HANDLE_INVALID;')
    L.append('\tpg_rpc_add_u64(out, rv);')
    def put(a):
        f = a[0]
        if f == 'msg_param':
            return ['pg_rpc_add_msg_param_result(out, param_kind, %s, %s);' % (a[1], a[2])]
        return [{
            'out_bytes': 'rs_add_out_bytes(out, {1}, *{2});',
            'out_fixed': 'rs_add_out_bytes(out, {1}, {2});',
            'out_handle': 'pg_rpc_add_u64(out, *{1});',
            'out_ulong': 'pg_rpc_add_u64(out, *{1});',
            'out_handles': 'rs_add_ulongs(out, {1}, {2}, *{3});',
            'out_ulongs': 'rs_add_out_ulongs(out, {1}, *{2});',
            'out_info': 'pg_rpc_add_{info}(out, {1});',
        }[f].format(*a, info=INFO.get(a[2], '') if f == 'out_info' else '')]
    extra = ['\t\tpg_rpc_add_mechanism_result(out, pMechanism);'] if name == 'C_DeriveKey' else []
    output_lines(L, args, put, 'pg_rpc_add_u64(out, *{2});', extra)
    L.append('\treturn true;')
    L.append('}')
    return '\n'.join(L) + '\n'


# Which mechanisms take which parameter structure (PKCS#11 v3.0 part 2
# says so per mechanism; these rules cover the names by family).
INIT_RULES = [
    (r'^CKM_RC2_(ECB|MAC)$', 'S_ULONG'), (r'^CKM_RC2_CBC(_PAD)?$', 'S_RC2_CBC'),
    (r'^CKM_RC2_MAC_GENERAL$', 'S_RC2_MAC_GENERAL'), (r'^CKM_RC5_(ECB|MAC)$', 'S_RC5'),
    (r'^CKM_RC5_CBC(_PAD)?$', 'S_RC5_CBC'), (r'^CKM_RC5_MAC_GENERAL$', 'S_RC5_MAC_GENERAL'),
    (r'_MAC_GENERAL$|_HMAC_GENERAL$', 'S_ULONG'),
    (r'^CKM_(EXTRACT_KEY_FROM_KEY|CONCATENATE_BASE_AND_KEY|SHA512_T|SHA512_T_HMAC|'
     r'SHA512_T_KEY_DERIVATION|XEDDSA)$', 'S_ULONG'),
    (r'^CKM_RSA_PKCS_OAEP$', 'S_OAEP'), (r'RSA_PKCS_PSS$', 'S_PSS'),
    (r'^CKM_RSA_AES_KEY_WRAP$', 'S_RSA_AES_KEY_WRAP'),
    (r'^CKM_ECDH1_(COFACTOR_)?DERIVE$', 'S_ECDH1'), (r'^CKM_ECMQV_DERIVE$', 'S_ECMQV'),
    (r'^CKM_ECDH_AES_KEY_WRAP$', 'S_ECDH_AES_KEY_WRAP'),
    (r'^CKM_X9_42_DH_DERIVE$', 'S_X942_DH1'), (r'^CKM_X9_42_DH_HYBRID_DERIVE$', 'S_X942_DH2'),
    (r'^CKM_X9_42_MQV_DERIVE$', 'S_X942_MQV'), (r'^CKM_KEA_DERIVE$', 'S_KEA'),
    (r'^CKM_EDDSA$', 'S_EDDSA'), (r'_GCM$', 'S_GCM'), (r'_CCM$', 'S_CCM'),
    (r'^CKM_(AES|CAMELLIA)_CTR$', 'S_AES_CTR'),
    (r'^CKM_DES3?_CBC_ENCRYPT_DATA$', 'S_DES_CBC_DATA'),
    (r'_CBC_ENCRYPT_DATA$', 'S_AES_CBC_DATA'),
    (r'_ECB_ENCRYPT_DATA$|^CKM_(CONCATENATE_DATA_AND_BASE|CONCATENATE_BASE_AND_DATA|'
     r'XOR_BASE_AND_DATA)$', 'S_KDF_STRING'),
    (r'^CKM_HKDF_(DERIVE|DATA)$', 'S_HKDF'), (r'^CKM_PKCS5_PBKD2$', 'S_PBKD2'),
    (r'^CKM_CHACHA20$', 'S_CHACHA20'), (r'^CKM_SALSA20$', 'S_SALSA20'),
    (r'^CKM_(CHACHA20|SALSA20)_POLY1305$', 'S_POLY1305'),
    (r'^CKM_SP800_108_(COUNTER|DOUBLE_PIPELINE)_KDF$', 'S_SP800_108'),
    (r'^CKM_SP800_108_FEEDBACK_KDF$', 'S_SP800_108_FEEDBACK'),
]
MESSAGE_RULES = [
    (r'_GCM$', 'S_GCM_MESSAGE'), (r'_CCM$', 'S_CCM_MESSAGE'),
    (r'^CKM_(CHACHA20|SALSA20)_POLY1305$', 'S_POLY1305_MSG'),
]


def first_match(rules, name):
    for pat, s in rules:
        if re.search(pat, name):
            return s
    return 'S_NONE'


def mech_table(pkcs11):
    mechs = {}
    for m in re.finditer(r'#define\s+(CKM_\w+)\s+(0x[0-9A-Fa-f]+)UL', pkcs11):
        name, value = m.group(1), int(m.group(2), 16)
        init, msg = first_match(INIT_RULES, name), first_match(MESSAGE_RULES, name)
        if init == 'S_NONE' and msg == 'S_NONE':
            continue
        mechs.setdefault(value, (name, init, msg))
    L = ['/* Generated by gen-rpc.py from include/p11glue/pkcs11.h: do not edit. */',
         'static const mech_entry mech_table[] = {']
    for value in sorted(mechs):
        name, init, msg = mechs[value]
        L.append('\t{ %s, %s, %s },' % (name, init, msg))
    L.append('};')
    return '\n'.join(L) + '\n'


def main():
    calls_h, pkcs11_h, outdir = sys.argv[1:4]
    text = open(calls_h).read()
    v3_start = text.index('#define PG_CALLS_3_0')
    calls = parse_calls(text[:v3_start])
    n2 = len(calls)
    calls += parse_calls(text[v3_start:])
    if len(calls) != 92:
        raise SystemExit('gen-rpc: expected 92 calls, found %d' % len(calls))
    hdr = ['/* Generated by gen-rpc.py from src/common/pkcs11-calls.h: do not edit. */',
           '#ifndef PG_RPC_CALLS_H', '#define PG_RPC_CALLS_H', '', 'enum {']
    for i, (name, _, _) in enumerate(calls):
        hdr.append('\tPG_RPC_CALL_%s = %d,' % (name, i))
    hdr += ['\tPG_RPC_CALL_COUNT = %d' % len(calls), '};', '',
            'static const char *const pg_rpc_call_names[PG_RPC_CALL_COUNT] = {']
    hdr += ['\t"%s",' % name for name, _, _ in calls]
    hdr += ['};', '', '#endif', '']
    open(outdir + '/rpc-calls.h', 'w').write('\n'.join(hdr))
    cl = ['/* Generated by gen-rpc.py from src/common/pkcs11-calls.h: do not edit. */', '']
    sv = ['/* Generated by gen-rpc.py from src/common/pkcs11-calls.h: do not edit. */', '',
          '/* Served by hand (server.c). */']
    for name in ('C_GetSlotList', 'C_OpenSession', 'C_GetAttributeValue', 'C_WaitForSlotEvent'):
        sv.append('static bool rs_%s(rs_ctx *ctx, pg_rpc_in *in, pg_rpc_out *out);' % name)
    sv.append('')
    for i, (name, ps, kind) in enumerate(calls):
        v3 = i >= n2
        if name not in CLIENT_HAND:
            cl.append(client_stub(name, ps, kind, v3))
        if name not in SERVER_HAND:
            sv.append(server_handler(name, ps, kind, v3))
    sv.append('static bool (*const rs_handlers[PG_RPC_CALL_COUNT])(rs_ctx *, pg_rpc_in *, pg_rpc_out *) = {')
    for name, _, _ in calls:
        if name in ('C_Initialize', 'C_Finalize', 'C_GetFunctionList', 'C_GetInterfaceList',
                    'C_GetInterface'):
            sv.append('\tNULL,  /* %s: answered by the client module itself */' % name)
        else:
            sv.append('\trs_%s,' % name)
    sv.append('};')
    open(outdir + '/rpc-client.inc', 'w').write('\n'.join(cl) + '\n')
    open(outdir + '/rpc-server.inc', 'w').write('\n'.join(sv) + '\n')
    open(outdir + '/rpc-mechs.inc', 'w').write(mech_table(open(pkcs11_h).read()))


if __name__ == '__main__':
    main()
