import Foundation
import ShelfCore
import ShelfDatabase

#if canImport(Glibc)
    import Glibc
#endif

/// A music root as a scan found it: there (online) or not (offline, with why). An offline root's
/// tracks are neither marked missing nor pruned, so an unplugged disk or a dropped share loses nothing.
public struct RootReport: Sendable, Codable, Equatable {
    public var path: String
    /// `online` or `offline`.
    public var state: String
    /// Why the root is offline: `gone`, `not a folder`, `empty` (where it held tracks) or
    /// `another file system` (and none of its files there).
    public var reason: String?
    /// The library's tracks under the root (missing ones included).
    public var tracks: Int

    /// Whether the root's files can be judged.
    public var online: Bool { state == "online" }
}

/// A track whose file is gone.
public struct MissingTrack: Sendable, Codable, Equatable {
    public var id: TrackID
    public var path: String
    /// When the file was found gone.
    public var since: Date?
}

/// What a scan of the roots found and did: the JSON of `shelf scan`.
public struct ScanReport: Sendable, Codable, Equatable {
    /// Each remembered root, online or offline.
    public var roots: [RootReport] = []
    /// Every missing track after the scan (on online roots, and outside every root).
    public var missing: [MissingTrack] = []
    /// Tracks marked missing by this scan.
    public var newlyMissing = 0
    /// Missing tracks whose files were back at their paths and were read again.
    public var returned = 0
    /// Missing tracks removed for good (`--prune`, `purge-missing-after`).
    public var pruned = 0
    /// Tracks of offline roots left alone (neither judged nor pruned).
    public var keptOffline = 0
}

extension Library {
    /// Remembers `urls` (folders; files, and folders inside a known root of the same library on
    /// the same file system, are skipped) as music roots of the library `into` (by ID; nil: the
    /// first library, "Music" made when there is none), so that scans judge them and an unmounted
    /// one is told apart from deleted files. `evenIfAbsent` remembers folders that are not there
    /// now (a server's configured roots: a share not mounted yet is then offline, not a library of
    /// missing files). A folder inside, or holding, another library's root is refused: a root
    /// belongs to one library.
    public func rememberRoots(_ urls: [URL], evenIfAbsent: Bool = false, into library: Int? = nil) async throws {
        let folders = urls.compactMap { url -> String? in
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder)
            guard exists ? isFolder.boolValue : evenIfAbsent else { return nil }
            return Self.rootPath(url)
        }
        guard !folders.isEmpty else { return }
        try await write { batch in try batch.addRoots(folders, into: library) }
    }

    /// The remembered music roots, in path order.
    public func musicRoots() async throws -> [String] {
        try await read { db in try db.query("SELECT path FROM music_root ORDER BY path", []) { try $0.string(0) } }
    }

    /// Forgets a music root (its tracks stay; they are then judged by their files alone).
    public func forgetRoot(_ url: URL) async throws {
        let path = Self.rootPath(url)
        try await write { batch in try batch.db.execute("DELETE FROM music_root WHERE path = ?", [path]) }
    }

    /// Each remembered root, online or offline, judged without touching any track.
    public func judgeRoots() async throws -> [RootReport] {
        let roots = try await read { db in
            try db.query("SELECT path, device FROM music_root ORDER BY path", []) { (try $0.string(0), $0.optionalInt64(1)) }
        }
        var reports: [RootReport] = []
        for (path, device) in roots {
            let (count, sample) = try await read { db -> (Int, [String]) in
                let bounds = Self.prefixBounds(path)
                let count = try db.scalar(Int.self, "SELECT count(*) FROM track WHERE path >= ? AND path < ?", [bounds.0, bounds.1]) ?? 0
                let sample = try db.query(
                    "SELECT path FROM track WHERE path >= ? AND path < ? AND missing_since IS NULL LIMIT 20", [bounds.0, bounds.1]
                ) { try $0.string(0) }
                return (count, sample)
            }
            reports.append(Self.judge(path, recordedDevice: device, tracks: count, sample: sample))
        }
        return reports
    }

    /// Marks the tracks whose files are gone from online roots (and from outside every root) as
    /// missing, reads again those whose files are back, and with `prune` removes missing tracks
    /// (only those missing since before `missingBefore` when given). Tracks of offline roots are
    /// left exactly as they are.
    public func scanMissing(prune: Bool = false, missingBefore: Date? = nil) async throws -> ScanReport {
        var report = ScanReport()
        report.roots = try await judgeRoots()
        let offline = report.roots.filter { !$0.online }.map(\.path)
        func onOfflineRoot(_ path: String) -> Bool { offline.contains { Self.isPath(path, under: $0) } }
        let all = try await read { db in
            try db.query("SELECT id, path, missing_since FROM track ORDER BY id", []) {
                (TrackID(try $0.int64(0)), try $0.string(1), $0.optionalDouble(2))
            }
        }
        var gone: [TrackID] = []
        var back: [URL] = []
        let roots = report.roots.map(\.path)
        for (id, path, since) in all {
            if onOfflineRoot(path) {
                report.keptOffline += 1
                continue
            }
            // Outside every root (a library older than remembered roots), a file whose folder is
            // gone too is taken for one on a disk that is not there, and left alone.
            if since == nil, !roots.contains(where: { Self.isPath(path, under: $0) }),
                !FileManager.default.fileExists(atPath: ((path as NSString).deletingLastPathComponent))
            {
                report.keptOffline += 1
                continue
            }
            let exists = Self.fileOnDisk(path)
            if since == nil, !exists { gone.append(id) }
            if since != nil, exists {
                // A track cut from an image comes back by reading the image again.
                back.append(
                    URL(fileURLWithPath: FileManager.default.fileExists(atPath: path) ? path : String(path[..<(path.lastIndex(of: "#") ?? path.endIndex)])))
            }
        }
        for start in stride(from: 0, to: gone.count, by: 1_000) {
            let part = gone[start..<min(gone.count, start + 1_000)]
            try await write { batch in
                for id in part { try batch.updateTrack(id) { $0.missingSince = batch.now } }
            }
        }
        report.newlyMissing = gone.count
        if !back.isEmpty {
            let imported = try await importFiles(at: Array(Set(back)).sorted { $0.path < $1.path })
            report.returned = imported.updated
        }
        let online = report.roots.filter(\.online).map(\.path)
        if !online.isEmpty {
            try await write { batch in
                for path in online {
                    try batch.db.execute(
                        "UPDATE music_root SET last_seen = ?, device = ? WHERE path = ?",
                        [batch.now.timeIntervalSince1970, Self.device(of: path), path])
                }
            }
        }
        var missing = try await read { db in
            try db.query("SELECT id, path, missing_since FROM track WHERE missing_since IS NOT NULL ORDER BY id", []) {
                MissingTrack(id: TrackID(try $0.int64(0)), path: try $0.string(1), since: try $0.get(2))
            }
        }
        missing.removeAll { onOfflineRoot($0.path) }
        if prune {
            let doomed = missing.filter { item in missingBefore.map { cutoff in (item.since ?? .distantFuture) < cutoff } ?? true }
            if !doomed.isEmpty {
                try await write { batch in for item in doomed { try batch.deleteTrack(item.id) } }
            }
            report.pruned = doomed.count
            let removed = Set(doomed.map(\.id))
            missing.removeAll { removed.contains($0.id) }
        }
        report.missing = missing
        return report
    }

    /// Marks the tracks at `paths` missing (a watcher saw their files go); returns how many were.
    @discardableResult
    public func markMissing(paths: [String]) async throws -> Int {
        guard !paths.isEmpty else { return 0 }
        return try await write { batch in
            var count = 0
            for path in paths {
                guard let id = try batch.db.scalar(Int64.self, "SELECT id FROM track WHERE path = ? AND missing_since IS NULL", [path]),
                    !Self.fileOnDisk(path)
                else { continue }
                try batch.updateTrack(TrackID(id)) { $0.missingSince = batch.now }
                count += 1
            }
            return count
        }
    }

    /// The paths of present tracks under `path` (a watcher saw a folder, or an image, go): the
    /// tracks in a folder, or those a CUE sheet cut from an image.
    public func trackPaths(under path: String) async throws -> [String] {
        let bounds = Self.prefixBounds(path)
        return try await read { db in
            try db.query(
                "SELECT path FROM track WHERE ((path >= ? AND path < ?) OR (path >= ? AND path < ?)) AND missing_since IS NULL",
                [bounds.0, bounds.1, path + "#", path + "$"]
            ) { try $0.string(0) }
        }
    }

    /// Whether a track's audio is on disk: its file, or for a track cut from an image by its CUE
    /// sheet (`IMAGE#NN`), the image.
    public static func fileOnDisk(_ path: String) -> Bool {
        if FileManager.default.fileExists(atPath: path) { return true }
        guard let hash = path.lastIndex(of: "#"), path[path.index(after: hash)...].allSatisfy(\.isNumber), hash < path.index(before: path.endIndex)
        else { return false }
        return FileManager.default.fileExists(atPath: String(path[..<hash]))
    }

    // MARK: Judging a root

    static func judge(_ path: String, recordedDevice: Int64?, tracks: Int, sample: [String]) -> RootReport {
        var report = RootReport(path: path, state: "online", reason: nil, tracks: tracks)
        func offline(_ reason: String) -> RootReport {
            report.state = "offline"
            report.reason = reason
            return report
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return offline("gone") }
        guard isFolder.boolValue else { return offline("not a folder") }
        guard tracks > 0 else { return report }
        // An unmounted mount point is usually an empty folder on the parent's file system.
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        if entries.isEmpty { return offline("empty") }
        // Another file system than before counts as the root only when its files are there (a
        // library moved to a new disk mounted at the same place); else it is a stand-in folder.
        if let recordedDevice, let device = device(of: path), device != recordedDevice,
            !sample.isEmpty, !sample.contains(where: fileOnDisk)
        {
            return offline("another file system")
        }
        return report
    }

    /// The file system a path is on (`st_dev`), nil when it cannot be read.
    static func device(of path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(bitPattern: UInt64(info.st_dev))
    }

    /// A root's path as stored: absolute, standardized, no trailing slash.
    static func rootPath(_ url: URL) -> String {
        let path = url.standardizedFileURL.path
        return path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    /// Whether `path` is `root` or inside it.
    public static func isPath(_ path: String, under root: String) -> Bool {
        path == root || path.hasPrefix(root == "/" ? "/" : root + "/")
    }

    /// The range of paths under a folder, for an indexed `path >= ? AND path < ?` (`0` follows `/`).
    static func prefixBounds(_ folder: String) -> (String, String) {
        let base = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        return (base + "/", base + "0")
    }
}

extension WriteBatch {
    /// `Library.rememberRoots` within this batch (`folders` as `Library.rootPath` makes them).
    func addRoots(_ folders: [String], into library: Int?) throws {
        let known = try db.query("SELECT path, coalesce(library_id, 0) FROM music_root", []) { (try $0.string(0), Int(try $0.int64(1))) }
        // Without a library named, a folder in a known root (of any library) is already there.
        let candidates = library != nil ? folders : folders.filter { folder in !known.contains { Library.isPath(folder, under: $0.0) } }
        guard !candidates.isEmpty else { return }
        let target = try library ?? defaultLibraryID()
        // A root inside another is kept only when it is another file system (a disk mounted in
        // the library's folder): it is then judged on its own.
        func nested(_ inner: String, in outer: String) -> Bool {
            Library.isPath(inner, under: outer)
                && (inner == outer || Library.device(of: inner) == nil || Library.device(of: inner) == Library.device(of: outer))
        }
        for folder in candidates {
            for (path, owner) in known where owner != target && (Library.isPath(folder, under: path) || Library.isPath(path, under: folder)) {
                let name = try db.scalar(String.self, "SELECT name FROM library WHERE id = ?", [Int64(owner)]) ?? "#\(owner)"
                throw LibraryError.invalidValue(
                    field: "music root", value: folder,
                    reason: path == folder ? "belongs to library '\(name)'" : "overlaps \(path) of library '\(name)'; a root belongs to one library")
            }
        }
        let mine = known.filter { $0.1 == target }.map(\.0)
        for folder in candidates where !mine.contains(where: { nested(folder, in: $0) }) {
            // A new root holding known ones on its own file system replaces them.
            for old in mine where old != folder && nested(old, in: folder) {
                try db.execute("DELETE FROM music_root WHERE path = ?", [old])
            }
            try db.execute(
                "INSERT OR IGNORE INTO music_root (path, device, added, library_id) VALUES (?, ?, ?, ?)",
                [folder, Library.device(of: folder), now.timeIntervalSince1970, Int64(target)])
        }
    }
}
