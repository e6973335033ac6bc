import Foundation
import ShelfCore
import ShelfDatabase

/// A folder's stable ID: a hash of its path, so that a rescan keeps it and a rename gives a new
/// one (the folder is another one then, as a file system sees it).
public struct FolderID: IntegerIdentifier {
    public let rawValue: Int64
    /// Wraps a stored or parsed value.
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// The ID of the folder at `path` (absolute, without a trailing slash): FNV-1a (64-bit) of a
    /// family byte and the path's bytes as a positive 62-bit number, like the views' IDs.
    public init(path: String) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in [UInt8(0x46)] + Array(path.utf8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let value = Int64(bitPattern: hash & 0x3FFF_FFFF_FFFF_FFFF)
        rawValue = value == 0 ? 1 : value
    }
}

/// A folder of a library's roots as it is on disk.
public struct Folder: Sendable, Codable, Equatable {
    public var id: FolderID
    /// Its last path component (a root's own name).
    public var name: String
    /// The folder holding it; nil for a root.
    public var parent: FolderID?
    /// Its absolute path.
    public var path: String
    /// Its path under its root ("" for the root itself).
    public var relativePath: String
    /// The library whose root holds it.
    public var library: Int
    /// The picture that stands for it: that of the first track with one among its first files
    /// (a folder's `cover.jpg` is on each of its tracks).
    public var artworkTrack: TrackID?
    public var artworkID: ArtworkID?
}

/// One folder opened: itself, its child folders and its tracks, each in file-name order (a CUE
/// image's tracks where the image is).
public struct FolderContents: Sendable, Equatable {
    public var folder: Folder
    public var folders: [Folder]
    public var tracks: [TrackID]
}

/// Which folder each handed-out ID is: IDs are hashes, so the paths behind them are kept as
/// folders are listed, and a stranger's ID (from before a restart) is found by one walk of every
/// track's folder, at most once per state of the library.
final class FolderNames: Sendable {
    private struct State {
        var paths: [FolderID: String] = [:]
        var walkedAt: Int64?
    }

    private let state = Locked(State())

    func remember(_ folders: [Folder]) {
        state.withLock { state in
            if state.paths.count > 1_000_000 { state.paths.removeAll() }
            for folder in folders { state.paths[folder.id] = folder.path }
        }
    }

    func path(_ id: FolderID) -> String? { state.withLock { $0.paths[id] } }

    /// Whether a walk at change-log position `seq` is still to be done (and notes it as done).
    func shouldWalk(at seq: Int64) -> Bool {
        state.withLock { state in
            guard state.walkedAt != seq else { return false }
            state.walkedAt = seq
            return true
        }
    }

    func remember(paths: [String]) {
        state.withLock { state in for path in paths { state.paths[FolderID(path: path)] = path } }
    }
}

/// The folders walked lately, by path, with the change-log position each walk saw: a folder
/// browsed again (an app's index on every start) is not walked again while nothing moved files.
final class FolderWalks: Sendable {
    struct Walk: Sendable {
        let tracks: [TrackID]
        let children: [String]
        let at: Int64
    }

    private let walks = Locked<[String: Walk]>([:])
    /// Folders kept at once (their track IDs and child names; a big root is the one that matters).
    static let capacity = 256

    /// The changes after a position that can move a file in or out of a folder: tracks added,
    /// deleted, or updated in their file (moved, or gone missing).
    static let changesSQL = ScopedGroups.trackChangesSQL(beyond: PropertyGroups(rawValue: ~PropertyGroups.file.rawValue))

    func kept(_ path: String) -> Walk? { walks.withLock { $0[path] } }

    func keep(_ path: String, tracks: [TrackID], children: [String], at: Int64) {
        walks.withLock { walks in
            if walks[path] == nil, walks.count >= Self.capacity { walks.removeAll() }
            walks[path] = Walk(tracks: tracks, children: children, at: at)
        }
    }
}

extension Library {
    /// The roots of every library the current reader may see, as folders, by library then path.
    public func rootFolders() async throws -> [Folder] {
        let scope = LibraryScope.current
        let libraries = try await libraries().filter { scope.sees(library: $0.id) }
        var folders: [Folder] = []
        for library in libraries {
            for root in library.roots {
                folders.append(try await describe(root, root: root, library: library.id))
            }
        }
        folderNames.remember(folders)
        return folders
    }

    /// The folder with this ID, its child folders and its tracks; nil when there is none the
    /// current reader may see (the same answer for both).
    /// Without `pictures`, the child folders' pictures are not looked up (an index of thousands
    /// of folders shows none; each costs a probe).
    public func folder(_ id: FolderID, pictures: Bool = true) async throws -> FolderContents? {
        if folderNames.path(id) == nil { try await walkFolders() }
        guard let path = folderNames.path(id) else { return nil }
        return try await folder(atPath: path, pictures: pictures)
    }

    /// The folder at `path` (absolute, or under a root), as `folder(_:)` lists it.
    public func folder(atPath given: String, pictures: Bool = true) async throws -> FolderContents? {
        let path = given.count > 1 && given.hasSuffix("/") ? String(given.dropLast()) : given
        let scope = LibraryScope.current
        guard scope.contains(path: path) else { return nil }
        guard
            let (library, root) = try await libraries().flatMap({ library in library.roots.map { (library.id, $0) } })
                .filter({ Self.isPath(path, under: $0.1) }).max(by: { $0.1.count < $1.1.count }),
            scope.sees(library: library)
        else { return nil }
        let (tracks, children) = try await walked(path)
        guard path == root || !tracks.isEmpty || !children.isEmpty else { return nil }
        let folder = try await describe(path, root: root, library: library)
        var folders: [Folder] = []
        for child in children {
            folders.append(try await describe(path == "/" ? "/" + child : path + "/" + child, root: root, library: library, picture: pictures))
        }
        folderNames.remember([folder] + folders)
        return FolderContents(folder: folder, folders: folders, tracks: tracks)
    }

    /// A folder's tracks and child folder names: kept from the last walk while no change since
    /// could move a file in or out of it (a track added, deleted, moved or gone missing; plays,
    /// tags and pictures cannot), else walked again in one snapshot with the position it is at.
    private func walked(_ path: String) async throws -> (tracks: [TrackID], children: [String]) {
        if let kept = folderWalks.kept(path) {
            let changed = try await read { db in try db.scalar(Int.self, FolderWalks.changesSQL, [kept.at]) == 1 }
            if !changed { return (kept.tracks, kept.children) }
        }
        let (tracks, children, at) = try await read { db in
            try db.transaction(.deferred) {
                let walked = try Self.walk(path, db: db)
                return (walked.tracks, walked.children, try MirrorStore.currentSeq(in: db))
            }
        }
        folderWalks.keep(path, tracks: tracks, children: children, at: at)
        return (tracks, children)
    }

    /// A folder's description (its picture looked up among its first 200 tracks).
    private func describe(_ path: String, root: String, library: Int, picture withPicture: Bool = true) async throws -> Folder {
        let bounds = Self.prefixBounds(path)
        let picture =
            !withPicture
            ? nil
            : try await read { db in
                try db.queryOne(
                    """
                    SELECT id, artwork_id FROM (SELECT id, artwork_id FROM track WHERE path >= ? AND path < ? AND missing_since IS NULL
                      ORDER BY path LIMIT 200) WHERE artwork_id IS NOT NULL LIMIT 1
                    """, [bounds.0, bounds.1]
                ) { (TrackID(try $0.int64(0)), ArtworkID(try $0.get(1, as: UUID.self))) }
            }
        let relative = path == root ? "" : String(path.dropFirst(root == "/" ? 1 : root.count + 1))
        let name = path == "/" ? "/" : String(path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...])
        return Folder(
            id: FolderID(path: path), name: name, parent: path == root ? nil : FolderID(path: Self.parentPath(path)), path: path,
            relativePath: relative, library: library, artworkTrack: picture?.0, artworkID: picture?.1)
    }

    /// The folder holding `path` ("/" for a path at the top).
    public static func parentPath(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// A folder's present tracks and child folder names, in path order, by a skip scan of the
    /// path index: a file is one step, a child folder one seek past everything under it, so a
    /// root over half a million tracks costs its own files and folders, not theirs.
    static func walk(_ folder: String, db: Connection) throws -> (tracks: [TrackID], children: [String]) {
        let base = folder == "/" ? "" : folder
        let (_, end) = prefixBounds(folder)
        var tracks: [TrackID] = []
        var children: [String] = []
        let prefixCount = base.utf8.count + 1
        // Stepped by hand, so that a seek stops at the first row past it (a statement run to its
        // end would read a child folder's files only to skip them).
        let statement = try db.cachedStatement("SELECT id, path, missing_since IS NULL FROM track WHERE path >= ? AND path < ? ORDER BY path")
        defer { statement.reset() }
        var low = base + "/"
        while true {
            statement.reset()
            try statement.bind([low, end])
            var skipTo: String?
            while try statement.step() {
                let row = statement.currentRow
                let rest = try row.string(1).utf8.dropFirst(prefixCount)
                if let slash = rest.firstIndex(of: UInt8(ascii: "/")) {
                    let child = String(decoding: rest[rest.startIndex..<slash], as: UTF8.self)
                    children.append(child)
                    skipTo = base + "/" + child + "0"
                    break
                }
                if try row.int64(2) != 0 { tracks.append(TrackID(try row.int64(0))) }
            }
            guard let skipTo else { break }
            low = skipTo
        }
        return (tracks, children)
    }

    /// Learns every folder of every root from the tracks' paths, at most once per state of the
    /// library (a stranger's ID is then found, or known to be none).
    private func walkFolders() async throws {
        let libraries = try await libraries()
        let seq = try await read { db in try MirrorStore.currentSeq(in: db) }
        guard folderNames.shouldWalk(at: seq) else { return }
        let roots = libraries.flatMap(\.roots)
        let paths = try await read { db in
            var folders = Set<String>()
            for root in roots {
                folders.insert(root)
                let bounds = Self.prefixBounds(root)
                try db.forEachRow("SELECT path FROM track WHERE path >= ? AND path < ? AND missing_since IS NULL", [bounds.0, bounds.1]) { row in
                    var folder = Self.parentPath(try row.string(0))
                    while folder.count > root.count, folders.insert(folder).inserted { folder = Self.parentPath(folder) }
                }
            }
            return Array(folders)
        }
        folderNames.remember(paths: paths)
    }
}

extension Library {
    /// Whether the current reader may see a picture: one of their tracks shows it, or it is an
    /// artist's own picture (`artist.*`, named by the artist, not by a library's files).
    public func artworkVisible(_ id: ArtworkID) async throws -> Bool {
        let scope = LibraryScope.current
        guard let roots = scope.roots else { return true }
        return try await read { db in
            if try db.scalar(Int.self, "SELECT 1 FROM artist_picture WHERE artwork_id = ? LIMIT 1", [id.rawValue]) != nil { return true }
            var visible = false
            try db.forEachRow("SELECT path FROM track WHERE artwork_id = ?", [id.rawValue]) { row in
                if !visible, LibraryScope(libraries: nil, roots: roots).contains(path: try row.string(0)) { visible = true }
            }
            return visible
        }
    }
}
