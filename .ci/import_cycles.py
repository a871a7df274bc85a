#!/usr/bin/env python3
# Usage: python3 .ci/import_cycles.py crates/<crate>/src [-v]  (exit 1 on a cycle)
"""Import graph of a crate's src/: an edge A -> B for every `crate::`/`super::`/`self::` path in A
(use lines, multi-line use groups and inline paths) that names module B; crate-root re-exports
(lib.rs `pub use m::{X}`) resolve to the defining module m. Reports cycles at file level and
at top-level-module level."""
import re, sys, os
root = sys.argv[1]
files = {}
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            p = os.path.join(d, f)
            rel = os.path.relpath(p, root)[:-3]
            mod = rel.replace(os.sep, '::')
            if mod.endswith('::mod'): mod = mod[:-5]
            if mod == 'lib': mod = ''
            files[mod] = open(p).read()
def strip(src):
    src = re.sub(r'//[^\n]*', '', src)
    # drop #[cfg(test)] mod tests { ... } blocks (unit tests may import anything of their parent)
    i = src.find('#[cfg(test)]')
    return src if i < 0 else src[:i]
# root re-exports: name -> module
reexp = {}
for m in re.finditer(r'pub use (\w+)(?:::(\w+))*::\{([^}]*)\}|pub use ([\w:]+)::(\w+);', files['']):
    if m.group(3):
        mod = m.group(0)[len('pub use '):].split('::{')[0]
        for n in re.split(r'[,\s]+', m.group(3)):
            if n: reexp[n] = mod
    else:
        reexp[m.group(5)] = m.group(4)
mods = set(files)
def resolve(cur, path):
    parts = path.split('::')
    if parts[0] == 'crate': base = []
    elif parts[0] == 'super': base = cur.split('::')[:-1] if cur else []
    elif parts[0] == 'self': base = cur.split('::') if cur else []
    else: return None
    rest = parts[1:]
    while rest and rest[0] == 'super': base = base[:-1]; rest = rest[1:]
    best = None
    for i in range(len(rest) + 1):
        cand = '::'.join(base + rest[:i])
        if cand in mods: best = cand
    if best == '' and rest and rest[0] in reexp:
        best = reexp[rest[0]]
        while best not in mods: best = best.rsplit('::', 1)[0]
    return best
edges = {m: set() for m in mods}
for m, src in files.items():
    if m == '': continue
    s = strip(src)
    paths = []
    for u in re.finditer(r'\buse\s+((?:crate|super|self)::[^;]*);', s, re.S):
        body = re.sub(r'\s+', '', u.group(1))
        # expand one level of braces
        mm = re.match(r'(.*?)::\{(.*)\}$', body)
        if mm:
            for item in re.split(r',(?![^{]*\})', mm.group(2)):
                item = item.split(' as ')[0].strip()
                if item and item != 'self': paths.append(mm.group(1) + '::' + item.split('::{')[0])
                else: paths.append(mm.group(1))
        else: paths.append(body)
    for p in re.finditer(r'\b((?:crate|super)(?:::\w+)+)', s):
        paths.append(p.group(1))
    # paths relative to this module: `child::Item` where child is a submodule of this one
    for p in re.finditer(r'(?<![:\w])(\w+)::(\w+)', s):
        child = (m + '::' if m else '') + p.group(1)
        if child in mods:
            paths.append('self::' + p.group(1))
    for p in paths:
        t = resolve(m, p)
        if t is not None and t != m and t != '':
            edges[m].add(t)
def cycles(edges):
    out, color, stack = [], {}, []
    def dfs(v):
        color[v] = 1; stack.append(v)
        for w in sorted(edges.get(v, ())):
            if color.get(w) == 1: out.append(stack[stack.index(w):] + [w])
            elif not color.get(w): dfs(w)
        stack.pop(); color[v] = 2
    for v in sorted(edges):
        if not color.get(v): dfs(v)
    return out
fc = cycles(edges)
top = {}
for a, bs in edges.items():
    ta = a.split('::')[0]
    for b in bs:
        tb = b.split('::')[0]
        if ta != tb: top.setdefault(ta, set()).add(tb)
tc = cycles(top)
n = sum(len(v) for v in edges.values())
print(f"{len(files)} files, {n} file-level edges")
for a in sorted(edges): print(f"  {a or 'lib'} -> {', '.join(sorted(edges[a]))}") if '-v' in sys.argv else None
print("file-level cycles:", fc or "none")
print("top-level module cycles:", tc or "none")
sys.exit(1 if fc or tc else 0)
