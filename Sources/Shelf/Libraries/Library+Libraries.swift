import Foundation
import ShelfCore
import ShelfDatabase

/// Libraries: named sets of music roots, and who may see which.
extension Library {
    // MARK: Reads

    /// Every library with its roots, by ID.
    public func libraries() async throws -> [MusicLibrary] {
        try await read { db in try Self.libraries(db) }
    }

    static func libraries(_ db: Connection) throws -> [MusicLibrary] {
        var roots: [Int: [String]] = [:]
        try db.forEachRow("SELECT library_id, path FROM music_root WHERE library_id IS NOT NULL ORDER BY path") { row in
            roots[Int(try row.int64(0)), default: []].append(try row.string(1))
        }
        return try db.query("SELECT id, name, created FROM library ORDER BY id", []) { row in
            let id = Int(try row.int64(0))
            return MusicLibrary(id: id, name: try row.string(1), roots: roots[id] ?? [], created: try row.get(2))
        }
    }

    /// The library with this name (compared without case); a typed error naming it when none.
    public func musicLibrary(named name: String) async throws -> MusicLibrary {
        guard let found = try await libraries().first(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) else {
            throw LibraryError.objectNotFound(kind: "library", id: name)
        }
        return found
    }

    /// Each library with its roots' states, tracks, albums and bytes.
    public func librarySummaries() async throws -> [LibrarySummary] {
        let states = Dictionary(try await judgeRoots().map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        let libraries = try await libraries()
        return try await read { db in
            try libraries.map { library in
                var summary = LibrarySummary(
                    id: library.id, name: library.name,
                    roots: library.roots.map { LibrarySummary.RootState(path: $0, state: states[$0]?.state ?? "offline", reason: states[$0]?.reason) },
                    tracks: 0, albums: 0, bytes: 0)
                guard !library.roots.isEmpty else { return summary }
                let (condition, arguments) = Self.underRoots(library.roots)
                try db.forEachRow(
                    """
                    SELECT count(*), coalesce(sum(file_size), 0),
                      count(DISTINCT lower(coalesce(nullif(album_artist, ''), artist, '')) || char(0) || lower(coalesce(album, '')))
                    FROM track WHERE \(condition)
                    """, arguments
                ) { row in
                    summary.tracks = Int(try row.int64(0))
                    summary.bytes = try row.int64(1)
                    summary.albums = Int(try row.int64(2))
                }
                return summary
            }
        }
    }

    /// The WHERE condition of the tracks under `roots` (path ranges the path index serves).
    static func underRoots(_ roots: [String]) -> (String, [(any SQLiteBindable)?]) {
        guard !roots.isEmpty else { return ("0", []) }
        let bounds = roots.map(prefixBounds)
        return ("(" + bounds.map { _ in "(path >= ? AND path < ?)" }.joined(separator: " OR ") + ")", bounds.flatMap { [$0.0, $0.1] })
    }

    /// What `user` may see: everything for an admin or a user with access to all libraries, else
    /// the tracks under the roots of the user's libraries.
    public func scope(for user: User) async throws -> LibraryScope {
        guard !user.seesAllLibraries else { return .all }
        return try await scope(libraries: user.libraries ?? [])
    }

    /// The scope of these libraries (IDs with no library are ignored).
    public func scope(libraries ids: [Int]) async throws -> LibraryScope {
        let all = try await libraries()
        let visible = all.filter { ids.contains($0.id) }
        return LibraryScope(libraries: visible.map(\.id), roots: visible.flatMap(\.roots))
    }

    /// `scope` narrowed to the libraries `texts` name by ID (as a request sends them; none: the
    /// scope itself). One that is not a number, not a library, or not in `scope` is
    /// `libraryNotFound` alike, so that a reader cannot tell a hidden library from none.
    public func scope(_ scope: LibraryScope, limitedTo texts: [String]) async throws -> LibraryScope {
        guard !texts.isEmpty else { return scope }
        let libraries = try await libraries()
        var ids: [Int] = []
        for text in texts {
            guard let id = Int(text), scope.sees(library: id), libraries.contains(where: { $0.id == id }) else {
                throw LibraryError.objectNotFound(kind: "library", id: "'\(text)'")
            }
            ids.append(id)
        }
        return scope.limited(to: ids, roots: Dictionary(libraries.map { ($0.id, $0.roots) }, uniquingKeysWith: { first, _ in first }))
    }

    /// The ID of the library whose root holds `path`; nil when none does.
    public func libraryID(ofPath path: String) async throws -> Int? {
        try await libraries().filter { $0.roots.contains { Self.isPath(path, under: $0) } }.first?.id
    }

    // MARK: Writes

    /// Makes a library (a name not taken, without regard to case) holding `roots`, or adds the
    /// roots to the library of that name; returns it. A root of another library is refused.
    @discardableResult
    public func addLibrary(name: String, roots: [URL], evenIfAbsent: Bool = false) async throws -> MusicLibrary {
        try MusicLibraries.checkName(name)
        let folders = roots.compactMap { url -> String? in
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder)
            return exists ? (isFolder.boolValue ? Self.rootPath(url) : nil) : (evenIfAbsent ? Self.rootPath(url) : nil)
        }
        // One batch: a refused root leaves no library behind.
        try await write { batch in
            let id = try batch.library(named: name, create: true)
            if !folders.isEmpty { try batch.addRoots(folders, into: id) }
        }
        return try await musicLibrary(named: name)
    }

    /// Renames a library; its ID, roots and who may see it stay.
    public func renameLibrary(_ name: String, to newName: String) async throws {
        try MusicLibraries.checkName(newName)
        try await write { batch in
            guard let id = try batch.library(named: name, create: false) else { throw LibraryError.objectNotFound(kind: "library", id: name) }
            if let other = try batch.library(named: newName, create: false), other != id {
                throw LibraryError.invalidValue(field: "library name", value: newName, reason: "another library has it")
            }
            try batch.db.execute("UPDATE library SET name = ? WHERE id = ?", [newName, Int64(id)])
        }
    }

    /// Removes a library and forgets its roots. One that holds tracks is refused unless
    /// `deleteTracks`, which deletes them (with their stars, ratings and playlist entries) in
    /// chunks, each a transaction of its own, so that a killed removal resumes where it stopped.
    /// Users who could see it lose it from their lists.
    public func removeLibrary(_ name: String, deleteTracks: Bool) async throws -> LibraryRemoval {
        let library = try await musicLibrary(named: name)
        let roots = library.roots
        var removal = try await read { db in
            let (condition, arguments) = Self.underRoots(roots)
            let tracks = "SELECT id FROM track WHERE \(condition)"
            return LibraryRemoval(
                library: library.name, tracks: try db.scalar(Int.self, "SELECT count(*) FROM track WHERE \(condition)", arguments) ?? 0,
                stars: try db.scalar(Int.self, "SELECT count(*) FROM user_track WHERE starred IS NOT NULL AND track_id IN (\(tracks))", arguments) ?? 0,
                ratings: try db.scalar(Int.self, "SELECT count(*) FROM user_track WHERE rating IS NOT NULL AND track_id IN (\(tracks))", arguments) ?? 0,
                playlistEntries: try db.scalar(Int.self, "SELECT count(*) FROM playlist_item WHERE track_id IN (\(tracks))", arguments) ?? 0)
        }
        if removal.tracks > 0 && !deleteTracks {
            throw LibraryError.invalidValue(
                field: "library", value: library.name,
                reason:
                    "holds \(removal.tracks) tracks, \(removal.stars) stars, \(removal.ratings) ratings and \(removal.playlistEntries) playlist entries; remove them with it (--delete-tracks) or keep the library"
            )
        }
        while true {
            let ids = try await read { db in
                let (condition, arguments) = Self.underRoots(roots)
                return try db.query("SELECT id FROM track WHERE \(condition) LIMIT 1000", arguments) { TrackID(try $0.int64(0)) }
            }
            guard !ids.isEmpty else { break }
            try await write { batch in for id in ids { try batch.deleteTrack(id) } }
        }
        try await write { batch in
            try batch.db.execute("DELETE FROM music_root WHERE library_id = ?", [Int64(library.id)])
            try batch.db.execute("DELETE FROM library WHERE id = ?", [Int64(library.id)])
            let limited = try batch.db.query("SELECT id, libraries FROM user WHERE libraries IS NOT NULL", []) { (try $0.int64(0), try $0.string(1)) }
            for (user, stored) in limited {
                let ids = MusicLibraries.decodeIDs(stored).filter { $0 != library.id }
                try batch.db.execute("UPDATE user SET libraries = ? WHERE id = ?", [MusicLibraries.encodeIDs(ids), user])
            }
        }
        if !deleteTracks { removal = LibraryRemoval(library: library.name, tracks: 0, stars: 0, ratings: 0, playlistEntries: 0) }
        return removal
    }

    /// Sets the libraries a user may see (nil: all); IDs with no library are refused.
    public func setLibraries(_ user: UserID, _ ids: [Int]?) async throws {
        try await write { batch in try batch.setLibraries(user, ids) }
    }
}

extension WriteBatch {
    /// The ID of the library named `name`; with `create`, one is made when there is none.
    func library(named name: String, create: Bool) throws -> Int? {
        if let id = try db.scalar(Int64.self, "SELECT id FROM library WHERE name = ?", [name]) { return Int(id) }
        guard create else { return nil }
        try db.execute("INSERT INTO library (name, created) VALUES (?, ?)", [name, now.timeIntervalSince1970])
        return Int(db.lastInsertRowID)
    }

    /// The library new roots join when none is named: the first, or "Music" made now.
    func defaultLibraryID() throws -> Int {
        if let id = try db.scalar(Int64.self, "SELECT min(id) FROM library") { return Int(id) }
        return try library(named: "Music", create: true) ?? 1
    }

    /// Sets the libraries a user may see (nil: all); IDs with no library are refused.
    public func setLibraries(_ user: UserID, _ ids: [Int]?) throws {
        _ = try requireUser(user)
        if let ids {
            let known = Set(try db.query("SELECT id FROM library", []) { Int(try $0.int64(0)) })
            if let unknown = ids.first(where: { !known.contains($0) }) {
                throw LibraryError.objectNotFound(kind: "library", id: String(unknown))
            }
        }
        try db.execute("UPDATE user SET libraries = ? WHERE id = ?", [MusicLibraries.encodeIDs(ids), user.rawValue])
    }
}
