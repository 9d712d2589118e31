#!/usr/bin/env python3
"""Checks a PGXN distribution archive (`make dist`):  scripts/check-pgxn-dist.py syncular-X.Y.Z.zip

META.json against the PGXN Meta Spec 1.0.0 (https://pgxn.org/spec/): the required keys and their
types, SemVer versions, the license strings, `provides`, `prereqs`, `resources`,
`release_status`, `no_index`, `tags`.  And against the archive and the tree: one top folder
<name>-<version>/ holding META.json, every `provides` file and docfile present in it, both
extensions (syncular, syncular_router) provided at their control files' default_version, and the
distribution version equal to the Makefile's EXTVERSION.  Prints one line per problem; exit 1 when
there is any.  Debian has no PGXN validator package (libpgxn-validator is not in bookworm)."""
import json, re, sys, zipfile

SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$")
LICENSES = {"agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd", "freebsd",
            "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1", "lgpl_3_0", "mit",
            "mozilla_1_0", "mozilla_1_1", "openssl", "perl_5", "postgresql", "qpl_1_0", "ssleay",
            "sun", "zlib", "open_source", "restricted", "unrestricted", "unknown"}
PHASES = {"configure", "build", "test", "runtime", "develop"}
RELATIONS = {"requires", "recommends", "suggests", "conflicts"}
VERSION_RANGE = re.compile(r"^\s*((==|!=|>=|<=|>|<)\s*)?\d+(\.\d+){0,2}[0-9A-Za-z.+-]*\s*$")
EXTENSIONS = {"syncular": "syncular.control", "syncular_router": "router/syncular_router.control"}

problems = []


def bad(msg):
    problems.append(msg)


def is_str(v):
    return isinstance(v, str) and v.strip() != ""


def check_meta(m):
    for key in ("name", "abstract", "maintainer", "license", "provides", "meta-spec", "version"):
        if key not in m:
            bad("META.json: required key %r is missing" % key)
    for key in ("name", "abstract", "version"):
        if key in m and not is_str(m[key]):
            bad("META.json: %s must be a non-empty string" % key)
    if is_str(m.get("name")) and not re.fullmatch(r"[^\s/\\:]{2,}", m["name"]):
        bad("META.json: name %r has whitespace, / \\ or :, or is shorter than 2" % m["name"])
    if is_str(m.get("version")) and not SEMVER.match(m["version"]):
        bad("META.json: version %r is not a semantic version" % m["version"])
    mt = m.get("maintainer")
    if not (is_str(mt) or (isinstance(mt, list) and mt and all(is_str(x) for x in mt))):
        bad("META.json: maintainer must be a string or a non-empty list of strings")
    lic = m.get("license")
    names = [lic] if isinstance(lic, str) else (lic if isinstance(lic, list) else [])
    if isinstance(lic, dict):
        if not lic or not all(is_str(k) and is_str(v) for k, v in lic.items()):
            bad("META.json: a license object maps names to URLs")
    elif not names or any(n not in LICENSES for n in names):
        bad("META.json: license %r is not one of the spec's license strings" % (lic,))
    ms = m.get("meta-spec")
    if not isinstance(ms, dict) or ms.get("version") != "1.0.0":
        bad("META.json: meta-spec must be an object with version \"1.0.0\"")
    elif "url" in ms and not is_str(ms["url"]):
        bad("META.json: meta-spec url must be a string")
    check_provides(m.get("provides"))
    check_prereqs(m.get("prereqs", {}))
    check_resources(m.get("resources", {}))
    if m.get("release_status", "stable") not in ("stable", "testing", "unstable"):
        bad("META.json: release_status must be stable, testing or unstable")
    for key in ("description", "generated_by"):
        if key in m and not is_str(m[key]):
            bad("META.json: %s must be a non-empty string" % key)
    tags = m.get("tags", [])
    if not isinstance(tags, list) or not all(is_str(t) and len(t) < 256 for t in tags):
        bad("META.json: tags must be a list of non-empty strings")
    ni = m.get("no_index", {})
    if not isinstance(ni, dict) or any(k not in ("file", "directory") for k in ni):
        bad("META.json: no_index must be an object with file and/or directory")


def check_provides(pv):
    if not isinstance(pv, dict) or not pv:
        bad("META.json: provides must be a non-empty object")
        return
    for ext, d in pv.items():
        if not isinstance(d, dict):
            bad("META.json: provides.%s must be an object" % ext)
            continue
        for key in ("file", "version"):
            if not is_str(d.get(key)):
                bad("META.json: provides.%s.%s is required (a string)" % (ext, key))
        if is_str(d.get("version")) and not SEMVER.match(d["version"]):
            bad("META.json: provides.%s.version %r is not a semantic version" % (ext, d["version"]))
        for key in ("abstract", "docfile"):
            if key in d and not is_str(d[key]):
                bad("META.json: provides.%s.%s must be a string" % (ext, key))


def check_prereqs(pr):
    if not isinstance(pr, dict):
        bad("META.json: prereqs must be an object")
        return
    for phase, rels in pr.items():
        if phase not in PHASES or not isinstance(rels, dict):
            bad("META.json: prereqs.%s is not a phase (%s) with an object" % (phase, ", ".join(sorted(PHASES))))
            continue
        for rel, reqs in rels.items():
            if rel not in RELATIONS or not isinstance(reqs, dict):
                bad("META.json: prereqs.%s.%s is not a relation with an object" % (phase, rel))
                continue
            for name, ver in reqs.items():
                if not (isinstance(ver, (int, float)) or (isinstance(ver, str) and all(
                        VERSION_RANGE.match(p) for p in ver.split(",")))):
                    bad("META.json: prereqs.%s.%s.%s: version %r" % (phase, rel, name, ver))


def check_resources(rs):
    if not isinstance(rs, dict):
        bad("META.json: resources must be an object")
        return
    for key, v in rs.items():
        if key == "homepage" and not is_str(v):
            bad("META.json: resources.homepage must be a URL")
        elif key == "bugtracker" and not (isinstance(v, dict) and set(v) <= {"web", "mailto"} and v):
            bad("META.json: resources.bugtracker must be an object with web and/or mailto")
        elif key == "repository" and not (isinstance(v, dict) and set(v) <= {"url", "web", "type"} and v):
            bad("META.json: resources.repository must be an object with url, web, type")
        elif key not in ("homepage", "bugtracker", "repository") and not key.startswith("x_"):
            bad("META.json: resources.%s is not a spec key (custom keys start with x_)" % key)


def control_version(text):
    m = re.search(r"^default_version\s*=\s*'([^']*)'", text, re.M)
    return m.group(1) if m else None


def main():
    path = sys.argv[1]
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        tops = {n.split("/", 1)[0] for n in names}
        if len(tops) != 1:
            bad("%s: more than one top folder: %s" % (path, sorted(tops)))
            return
        top = tops.pop()
        meta = json.loads(z.read(top + "/META.json"))
        check_meta(meta)
        if top != "%s-%s" % (meta.get("name"), meta.get("version")):
            bad("%s: top folder %s is not <name>-<version>" % (path, top))
        for ext, d in (meta.get("provides") or {}).items():
            for key in ("file", "docfile"):
                if is_str(d.get(key)) and "%s/%s" % (top, d[key]) not in names:
                    bad("META.json: provides.%s.%s %s is not in the archive" % (ext, key, d[key]))
        for ext, control in EXTENSIONS.items():
            d = (meta.get("provides") or {}).get(ext)
            if not isinstance(d, dict):
                bad("META.json: provides has no %s" % ext)
            elif d.get("version") != control_version(z.read("%s/%s" % (top, control)).decode()):
                bad("META.json: provides.%s.version differs from %s default_version" % (ext, control))
        mk = re.search(r"^EXTVERSION\s*=\s*(\S+)", z.read(top + "/Makefile").decode(), re.M)
        if not mk or mk.group(1) != meta.get("version"):
            bad("META.json: version %s differs from the Makefile's EXTVERSION" % meta.get("version"))


if __name__ == "__main__":
    main()
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print("%s: META.json valid (PGXN Meta Spec 1.0.0), both extensions provided" % sys.argv[1])
