import Dispatch
import Foundation
import Shelf
import ShelfCore
import ShelfServer

/// One finding of `shelf doctor`: what was checked, its state, what was found and what to do.
struct DoctorCheck: Encodable, Sendable {
    /// How a check came out; only `error` makes the command fail.
    enum Status: String, Encodable, Sendable {
        case ok
        case warning
        case error
        case skipped
    }

    /// The check's stable name (`secretKey`), for scripts.
    let name: String
    let status: Status
    /// What was found.
    let detail: String
    /// What to do about it; empty when there is nothing to do.
    let advice: String

    /// A check that passed.
    static func ok(_ name: String, _ detail: String) -> DoctorCheck { DoctorCheck(name: name, status: .ok, detail: detail, advice: "") }

    /// A problem that leaves the library working, less well.
    static func warning(_ name: String, _ detail: String, advice: String) -> DoctorCheck {
        DoctorCheck(name: name, status: .warning, detail: detail, advice: advice)
    }

    /// A problem that stops the library or its server from working.
    static func error(_ name: String, _ detail: String, advice: String) -> DoctorCheck {
        DoctorCheck(name: name, status: .error, detail: detail, advice: advice)
    }

    /// A check that does not apply here.
    static func skipped(_ name: String, _ detail: String) -> DoctorCheck { DoctorCheck(name: name, status: .skipped, detail: detail, advice: "") }
}

/// The checks of `shelf doctor`, in the order they print. Each reads the system as it is and
/// writes nothing; a check that cannot apply (no store yet, no systemd) is skipped, never failed.
struct DoctorChecks {
    /// The library directory checked.
    let directory: URL
    /// The store as `Library.inspect()` found it: nil inside when there is no store.
    let inspection: Result<LibraryInspection?, any Error>
    let configPath: String?
    let config: ServerConfig?
    let configErrors: [ConfigError]
    let environment: [String: String]

    /// Every check, in order.
    func run() -> [DoctorCheck] {
        let roots = musicRoots
        return [
            configCheck(), libraryCheck(), storeCheck(), mirrorCheck(), secretKeyCheck(), musicRootsCheck(roots), inotifyCheck(roots),
            toolCheck("ffmpeg", path: try? Library.findFFmpeg(), needs: "transcoding, export to other formats and loudness measuring need it"),
            toolCheck(
                "ffprobe", path: try? FFprobe.locate().executable,
                needs: "importing the formats TagLib cannot read (DSD, AC-3, tracker modules) needs it"),
            systemdCheck(),
        ]
    }

    /// The store, when it was read.
    var found: LibraryInspection? {
        if case .success(let value?) = inspection { return value }
        return nil
    }

    /// Why the checks that need the store were skipped.
    var noStore: String {
        if case .failure = inspection { return "the store cannot be read (see store)" }
        return "no library yet"
    }

    /// Whether the config file is about this library (it names none, or this one).
    var configApplies: Bool {
        guard let library = config?.library else { return true }
        return URL(fileURLWithPath: library).standardizedFileURL.path == directory.path
    }

    /// The store's remembered roots and the config's music folders, without repeats.
    var musicRoots: [String] {
        let configured = configApplies ? (config?.music ?? []).map { URL(fileURLWithPath: $0).standardizedFileURL.path } : []
        return Array(Set((found?.musicRoots ?? []) + configured)).sorted()
    }

    var searchPath: String { environment["PATH"] ?? "/usr/bin:/bin" }

    // MARK: The checks

    /// The config file: its mistakes stop `shelf serve` (exit status 1), so they are errors here.
    func configCheck() -> DoctorCheck {
        guard let configPath else {
            return .skipped("config", "no config file (looked for \(ServerConfig.searchPaths(environment: environment).joined(separator: ", ")))")
        }
        if let first = configErrors.first {
            return .error(
                "config", "\(configPath): \(Self.count(configErrors.count, "mistake")), the first at line \(first.line): \(first.reason)",
                advice: "`shelf config check \(Self.quoted(configPath))` lists them all; `shelf serve` does not start until they are fixed")
        }
        let library = config?.library.map { "library \($0)" } ?? "no library (serve uses --library, SHELF_LIBRARY or the default)"
        return .ok("config", "\(configPath): valid; \(library), \(Self.count(config?.music?.count ?? 0, "music folder"))")
    }

    /// The library directory: it must be writable (or creatable), with room for the store to grow.
    func libraryCheck() -> DoctorCheck {
        let path = directory.path
        let me = Self.userName(geteuid())
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            var ancestor = directory.deletingLastPathComponent()
            while !FileManager.default.fileExists(atPath: ancestor.path) && ancestor.path != "/" { ancestor = ancestor.deletingLastPathComponent() }
            guard access(ancestor.path, W_OK | X_OK) == 0 else {
                return .error(
                    "library", "\(path) does not exist, and \(me) cannot create it (\(ancestor.path) is not writable)",
                    advice: "create it for \(me): sudo install -d -o \(me) \(Self.quoted(path)); or name another directory with --library")
            }
            let free = Self.freeBytes(at: ancestor.path).map { ", \(Format.bytes($0)) free" } ?? ""
            return .ok("library", "\(path) does not exist yet; the first import makes it (\(ancestor.path) is writable\(free))")
        }
        guard isDirectory.boolValue else {
            return .error("library", "\(path) is a file, not a directory", advice: "name a directory with --library (or SHELF_LIBRARY), or move the file away")
        }
        guard access(path, W_OK | X_OK) == 0 else {
            let owner = Self.owner(of: path).map(Self.userName) ?? "someone else"
            return .error(
                "library", "\(path) is not writable by \(me) (its owner is \(owner))",
                advice: "run shelf as \(owner) (sudo -u \(owner) shelf …), or give the directory to \(me): sudo chown -R \(me) \(Self.quoted(path))")
        }
        let store = found?.bytesOnDisk ?? 0
        guard let free = Self.freeBytes(at: path) else { return .ok("library", "\(path): writable by \(me); free space unknown") }
        // Room for the store to double (a mirror rebuild, a big import) and never under 100 MiB.
        let wanted = max(2 * store, 100 << 20)
        let sizes = "\(Format.bytes(free)) free, store and mirror \(Format.bytes(store))"
        guard free >= wanted else {
            return .warning(
                "library", "\(path): writable by \(me), but only \(sizes)",
                advice:
                    "free at least \(Format.bytes(wanted - free)) on its file system: imports, edits and mirror builds need room, and a write that finds the disk full is rolled back"
            )
        }
        return .ok("library", "\(path): writable by \(me), \(sizes)")
    }

    /// The store: it opens, its schema is this build's, and `PRAGMA quick_check` finds nothing.
    func storeCheck() -> DoctorCheck {
        let file = directory.appendingPathComponent("library.sqlite").path
        let inspected: LibraryInspection?
        switch inspection {
        case .failure(let error):
            return .error("store", "\(file) cannot be read: \(error)", advice: Self.advice(for: error, file: file))
        case .success(let value): inspected = value
        }
        guard let store = inspected else {
            return .warning("store", "no library yet at \(directory.path)", advice: "`shelf import DIR` makes one from the music in DIR")
        }
        let current = EngineVersions.storeSchema
        let schema = "schema \(store.schemaVersion) (this build's is \(current))"
        guard store.isIntact else {
            let problems = Self.count(store.integrity.count, "problem")
            return .error(
                "store", "\(file): \(schema); quick_check found \(problems), the first: \(store.integrity.first ?? "")",
                advice: "restore library.sqlite from a backup; or try `sqlite3 \(Self.quoted(file)) .recover` on a copy (shelf does not repair a store)")
        }
        let facts = "\(Self.count(store.trackCount, "track")), \(Format.bytes(store.bytesOnDisk)) on disk"
        if store.schemaVersion > current {
            return .error(
                "store", "\(file): \(schema), written by a newer shelf; this one refuses to open it",
                advice: "run the shelf that wrote it (this is \(EngineVersions.version)), or restore a backup made before it")
        }
        if store.schemaVersion == 0 {
            return .warning("store", "\(file) is empty", advice: "the next command that opens the library writes its tables (`shelf info`)")
        }
        if store.schemaVersion == 1 {
            return .warning(
                "store", "\(file): legacy \(schema), which only `shelf migrate` opens",
                advice: "`shelf migrate` moves its pictures out in resumable chunks and brings it to schema \(current)")
        }
        if store.schemaVersion < current {
            return .warning(
                "store", "\(file): \(schema); quick_check ok, \(facts)",
                advice: "the next command that opens it migrates it to schema \(current) (`shelf info`); keep a copy if an older shelf still needs it")
        }
        return .ok("store", "\(file): \(schema), quick_check ok, \(facts)")
    }

    /// The read mirror: built and current, or what brings it there.
    func mirrorCheck() -> DoctorCheck {
        guard let mirror = found?.mirror else { return .skipped("mirror", noStore) }
        let size = Format.bytes(mirror.bytesOnDisk)
        let build = "`shelf mirror build` builds it now (`shelf serve` builds it in the background); until then queries take the slower direct path"
        switch mirror.state {
        case .disabled:
            return .ok("mirror", "turned off: queries take the direct path (`shelf mirror enable` turns it on)")
        case .missing:
            return .warning("mirror", "no mirror.sqlite yet: it will be built on first open", advice: build)
        case .stale:
            return .warning("mirror", "mirror.sqlite is rebuilt on the next open: \(mirror.reason ?? "it is out of date")", advice: build)
        case .building:
            let phase = mirror.phase.map { " (phase \($0.rawValue))" } ?? ""
            return .warning(
                "mirror", "build not finished\(phase): \(mirror.builtTracks) of \(mirror.totalTracks) tracks copied, \(size)",
                advice: "`shelf mirror build` resumes it (a running `shelf serve` builds it in the background)")
        case .ready where mirror.behind > 0:
            return .warning(
                "mirror", "ready, but \(Self.count(Int(mirror.behind), "change")) behind the store (applied up to \(mirror.appliedSeq)), \(size)",
                advice: "the next command that opens the library catches it up (`shelf mirror build` does it now)")
        case .ready:
            return .ok("mirror", "ready and current (change \(mirror.appliedSeq)), \(size)")
        }
    }

    /// `secret.key`: what `SecretKey` demands to read it (a regular file, 32 bytes, no access for
    /// group or others), and that the user running shelf owns it.
    func secretKeyCheck() -> DoctorCheck {
        let path = directory.appendingPathComponent("secret.key").path
        let quoted = Self.quoted(path)
        let users = found?.userCount ?? 0
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            guard code == ENOENT else {
                return .error(
                    "secretKey", "\(path) cannot be examined: \(String(cString: strerror(code)))",
                    advice: "give \(Self.userName(geteuid())) access to \(directory.path)")
            }
            guard users == 0 else {
                return .error(
                    "secretKey", "\(path) is missing, and the passwords of \(Self.count(users, "user")) are encrypted with it",
                    advice: "restore secret.key from a backup of this library (mode 600); without it, set each password again (`shelf user passwd NAME`)")
            }
            return .ok("secretKey", "none yet: it will be made with the first user")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK:
            return .error(
                "secretKey", "\(path) is a symbolic link, which shelf refuses to follow",
                advice: "replace the link with the file it points to (cp --remove-destination \"$(readlink -f \(quoted))\" \(quoted)), mode 600")
        default:
            return .error("secretKey", "\(path) is not a regular file", advice: "restore secret.key from a backup of this library")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            return .error(
                "secretKey", "\(path) has mode \(String(mode, radix: 8)); shelf reads it only at 600 or stricter, so no password can be checked",
                advice: "chmod 600 \(quoted)")
        }
        guard info.st_size == 32 else {
            return .error("secretKey", "\(path) holds \(info.st_size) bytes; a key is 32", advice: "restore secret.key from a backup of this library")
        }
        let owner = Self.userName(info.st_uid)
        let me = Self.userName(geteuid())
        guard access(path, R_OK) == 0 else {
            return .error(
                "secretKey", "\(path) (owner \(owner), mode \(String(mode, radix: 8))) cannot be read by \(me)",
                advice: info.st_uid == geteuid() ? "chmod 600 \(quoted)" : "run shelf as \(owner) (sudo -u \(owner) shelf …), or: sudo chown \(me) \(quoted)")
        }
        guard info.st_uid == geteuid() else {
            return .warning(
                "secretKey", "\(path) belongs to \(owner), not to \(me) who runs this check",
                advice: "run shelf as \(owner), the user the library belongs to (sudo -u \(owner) shelf …)")
        }
        return .ok("secretKey", "\(path): mode \(String(mode, radix: 8)), owner \(owner)")
    }

    /// The music roots (the store's and the config's): each a readable folder; a missing one is
    /// offline, which the library survives (its tracks are kept until it is back).
    func musicRootsCheck(_ roots: [String]) -> DoctorCheck {
        guard !roots.isEmpty else {
            return .skipped(
                "musicRoots",
                found == nil ? "\(noStore), and no music folders in a config file" : "no music roots yet (`shelf import DIR` remembers DIR)")
        }
        var offline: [String] = []
        var files: [String] = []
        var unreadable: [String] = []
        for root in roots {
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory) {
                offline.append(root)
            } else if !isDirectory.boolValue {
                files.append(root)
            } else if access(root, R_OK | X_OK) != 0 {
                unreadable.append(root)
            }
        }
        var problems: [String] = []
        var advice: [String] = []
        if !unreadable.isEmpty {
            problems.append("not readable by \(Self.userName(geteuid())): \(unreadable.joined(separator: ", "))")
            advice.append("let \(Self.userName(geteuid())) read them (chmod -R a+rX, or a group it is in)")
        }
        if !files.isEmpty {
            problems.append("files, not folders: \(files.joined(separator: ", "))")
            advice.append("point the config's `music` at folders")
        }
        if !offline.isEmpty {
            problems.append("offline (missing): \(offline.joined(separator: ", "))")
            advice.append("mount or reconnect them; their tracks are kept, and scans and the watcher take them up again when they are back")
        }
        guard !problems.isEmpty else {
            return .ok("musicRoots", "\(Self.count(roots.count, "root")) readable: \(roots.joined(separator: ", "))")
        }
        let detail = problems.joined(separator: "; ") + (roots.count > 1 ? " (of \(roots.count) roots)" : "")
        let joined = advice.joined(separator: "; ")
        return unreadable.isEmpty && files.isEmpty ? .warning("musicRoots", detail, advice: joined) : .error("musicRoots", detail, advice: joined)
    }

    /// The inotify limits against the folders the watcher would watch: one watch per folder, and
    /// the same headroom the watcher asks for when it runs out (a quarter more).
    func inotifyCheck(_ roots: [String]) -> DoctorCheck {
        guard let hostWatches = Self.number(in: "/proc/sys/fs/inotify/max_user_watches") else {
            return .skipped("inotify", "no /proc/sys/fs/inotify: not Linux, or /proc is not mounted")
        }
        // The smaller of the host's limit and this user namespace's (lower in a container), as the watcher reads it.
        let namespaceWatches = Self.number(in: "/proc/sys/user/max_inotify_watches")
        var (watches, watchKey) = (hostWatches, "fs.inotify.max_user_watches")
        if let namespaceWatches, namespaceWatches < hostWatches { (watches, watchKey) = (namespaceWatches, "user.max_inotify_watches") }
        let instances = [Self.number(in: "/proc/sys/fs/inotify/max_user_instances"), Self.number(in: "/proc/sys/user/max_inotify_instances")]
            .compactMap { $0 }.min()
        let limits = "\(watchKey) \(watches), max_user_instances \(instances.map(String.init) ?? "unknown")"
        let online = roots.filter { root in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory) && isDirectory.boolValue
        }
        if let instances, instances < 8 {
            return .warning(
                "inotify", "\(limits): each watcher (shelf serve, shelf watch) needs an instance, shared with every program of this user",
                advice: "sudo sysctl fs.inotify.max_user_instances=128, and the same line in /etc/sysctl.d/local.conf to keep it after a reboot")
        }
        guard !online.isEmpty else { return .ok("inotify", "\(limits); no music folders to watch yet") }
        let (folders, complete) = Self.countFolders(under: online, limit: 1_000_000)
        let needed = folders + folders / 4
        let counted = "\(complete ? "" : "at least ")\(Self.count(folders, "folder")) under the music roots"
        guard watches >= needed else {
            return .warning(
                "inotify", "\(counted) and \(limits): the watcher needs about \(needed) watches, shared with every program of this user",
                advice:
                    "sudo sysctl \(watchKey)=\(needed), and `\(watchKey)=\(needed)` in /etc/sysctl.d/local.conf to keep it after a reboot; until then the folders past the limit are left to scheduled scans"
            )
        }
        return .ok("inotify", "\(counted); \(limits)")
    }

    /// ffmpeg or ffprobe, found as the engine finds it, and its version line.
    func toolCheck(_ tool: String, path: String?, needs: String) -> DoctorCheck {
        guard let path else {
            return .warning(tool, "not found on PATH (\(searchPath))", advice: "install Debian's ffmpeg package (sudo apt-get install ffmpeg): \(needs)")
        }
        guard let answer = Self.capture(path, ["-hide_banner", "-version"]), answer.status == 0, let first = answer.output.split(separator: "\n").first
        else {
            return .warning(
                tool, "\(path) does not answer -version", advice: "reinstall Debian's ffmpeg package (sudo apt-get install --reinstall ffmpeg): \(needs)")
        }
        let version = first.range(of: " Copyright").map { String(first[..<$0.lowerBound]) } ?? String(first)
        return .ok(tool, "\(version) (\(path))")
    }

    /// shelf.service as systemd has it: its user, and whether its sandbox lets it write the
    /// library. Never an error: a machine without systemd, or with another unit, is fine.
    func systemdCheck() -> DoctorCheck {
        let underSystemd = !(environment["INVOCATION_ID"] ?? "").isEmpty
        var unit: [String: String] = [:]
        if let systemctl = try? ProgramRunner.locate(.systemctl, searchPath: searchPath),
            let shown = Self.capture(
                systemctl,
                [
                    "show", "shelf.service",
                    "--property=User,ExecStart,LimitNOFILE,ProtectSystem,ProtectHome,ReadWritePaths,StateDirectory,WorkingDirectory,LoadState",
                ], seconds: 5),
            shown.status == 0
        {
            for line in shown.output.split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { continue }
                unit[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
        }
        guard unit["LoadState"] == "loaded" else {
            if underSystemd { return .ok("systemd", "running under systemd as \(Self.userName(geteuid())); no shelf.service to inspect") }
            return .skipped("systemd", "not under systemd (no shelf.service)")
        }
        let user = unit["User"].flatMap { $0.isEmpty ? nil : $0 }
        let path = directory.path
        // Paths the unit may write despite ProtectSystem/ProtectHome: ReadWritePaths ("-" marks an
        // optional one) and StateDirectory's folders under /var/lib.
        let readWritePaths = (unit["ReadWritePaths"] ?? "").split(separator: " ").map { entry in String(entry.drop { $0 == "-" || $0 == "+" }) }
        let stateDirectories = (unit["StateDirectory"] ?? "").split(separator: " ").map { "/var/lib/\($0)" }
        var writable: [String] = []
        for entry in readWritePaths + stateDirectories where !writable.contains(entry) { writable.append(entry) }
        var readOnly: [String] = []
        switch unit["ProtectSystem"] ?? "no" {
        case "strict": readOnly = ["/"]
        case "full": readOnly = ["/usr", "/boot", "/efi", "/etc"]
        case "yes", "true": readOnly = ["/usr", "/boot", "/efi"]
        default: break
        }
        if ["yes", "true", "read-only", "tmpfs"].contains(unit["ProtectHome"] ?? "no") { readOnly += ["/home", "/root", "/run/user"] }
        let canWrite = writable.contains { Library.isPath(path, under: $0) } || !readOnly.contains { Library.isPath(path, under: $0) }
        var facts = ["shelf.service runs as \(user ?? "root")"]
        if let start = unit["ExecStart"], let argv = start.range(of: "argv[]=") {
            facts.append("`\(start[argv.upperBound...].prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces))`")
        }
        facts.append("ProtectSystem=\(unit["ProtectSystem"] ?? "no"), writable paths \(writable.isEmpty ? "none" : writable.joined(separator: " "))")
        facts.append("LimitNOFILE=\(unit["LimitNOFILE"] ?? "unknown")")
        let detail = facts.joined(separator: ", ")
        var problems: [String] = []
        var advice: [String] = []
        if !canWrite {
            problems.append("its sandbox does not let it write \(path)")
            advice.append("if it serves this library, add ReadWritePaths=\(path) with `systemctl edit shelf`, then `systemctl restart shelf`")
        }
        if user == nil {
            problems.append("it runs as root")
            advice.append("give it a user of its own (User=shelf and Group=shelf, as contrib/shelf.service does)")
        }
        if let user, let owner = Self.owner(of: path).map(Self.userName), owner != user {
            problems.append("\(path) belongs to \(owner)")
            advice.append("if it serves this library: sudo chown -R \(user): \(Self.quoted(path))")
        }
        if let files = unit["LimitNOFILE"].flatMap({ Int($0) }), files < 1024 {
            problems.append("LimitNOFILE=\(files) is low for a server (a descriptor per connection, transcode and library file)")
            advice.append("LimitNOFILE=8192 with `systemctl edit shelf`")
        }
        guard problems.isEmpty else {
            return .warning("systemd", "\(detail); but \(problems.joined(separator: "; "))", advice: advice.joined(separator: "; "))
        }
        return .ok("systemd", "\(detail); it can write \(path)")
    }

    // MARK: Helpers

    /// Advice for a store that could not be read, by the engine error's kind.
    static func advice(for error: any Error, file: String) -> String {
        guard let error = error as? any ClassifiedError else { return restoreAdvice(file) }
        switch error.kind {
        case .busy: return "another process holds the store's write lock (a migration or an import?): run doctor again when it is done"
        case .damaged:
            return "if this is not a Shelf library, name the right directory with --library; otherwise " + restoreAdvice(file)
        case .internal, .notFound, .forbidden:
            return "check that \(userName(geteuid())) may read \(file) and its directory"
        case .full: return "free some space on the device holding \(file), then run doctor again"
        case .unavailable: return "run the shelf that wrote it (this is \(EngineVersions.version)), or `shelf migrate` for a legacy store"
        case .invalid, .conflict, .expired: return restoreAdvice(file)
        }
    }

    /// What to do with a store that cannot be read: Shelf never repairs one.
    static func restoreAdvice(_ file: String) -> String {
        "restore library.sqlite from a backup; or try `sqlite3 \(quoted(file)) .recover` on a copy (shelf does not repair a store)"
    }

    /// "1 track", "2 tracks".
    static func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }

    /// `path` as a shell word: bare when it needs no quoting, else in single quotes.
    static func quoted(_ path: String) -> String {
        let plain = path.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "/._-+:@%,=".unicodeScalars.contains($0) }
        return plain && !path.isEmpty ? path : "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The login name of `uid`, or `uid N` when it has none.
    static func userName(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return String(cString: name)
    }

    /// The owner of `path`, nil when it cannot be examined.
    static func owner(of path: String) -> uid_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_uid
    }

    /// Bytes an unprivileged user may still write on the file system holding `path`.
    static func freeBytes(at path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// The number a /proc file holds, nil when it cannot be read.
    static func number(in file: String) -> Int? {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The folders under `roots` as the watcher counts them (hidden ones and links to folders left
    /// out), stopping at `limit` so that a huge or looping tree cannot hold the check up.
    static func countFolders(under roots: [String], limit: Int) -> (count: Int, complete: Bool) {
        var count = 0
        var pending = roots
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let folder = pending.popLast() {
            count += 1
            if count >= limit { return (count, false) }
            guard let dir = opendir(folder) else { continue }
            defer { closedir(dir) }
            while let entry = readdir(dir) {
                let raw = UnsafeRawPointer(entry).advanced(by: nameOffset)
                let bytes = UnsafeRawBufferPointer(start: raw, count: strlen(raw.assumingMemoryBound(to: CChar.self)))
                // Also skips "." and "..".
                guard let first = bytes.first, first != UInt8(ascii: ".") else { continue }
                let type = entry.pointee.d_type
                guard type == UInt8(DT_DIR) || type == UInt8(DT_UNKNOWN), let name = String(validating: bytes, as: UTF8.self) else { continue }
                let path = folder.hasSuffix("/") ? folder + name : folder + "/" + name
                if type == UInt8(DT_UNKNOWN) {
                    // Some file systems (older XFS, some FUSE) do not fill d_type.
                    var info = stat()
                    guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { continue }
                }
                pending.append(path)
            }
        }
        return (count, true)
    }

    /// Runs `executable` and returns its status and standard output; nil when it cannot start or
    /// is still running after `seconds` (it is then killed), so a hung tool cannot hang the check.
    static func capture(_ executable: String, _ arguments: [String], seconds: Int = 10) -> (status: Int32, output: String)? {
        guard let finished = try? ProgramRunner.run(executable, arguments, timeout: Double(seconds)) else { return nil }
        return (finished.status, String(decoding: finished.output, as: UTF8.self))
    }
}
