import Foundation
import ShelfCore

/// One library of the store: a name and the music roots it holds. A root belongs to one library;
/// a track belongs to the library whose root holds its file.
public struct MusicLibrary: Sendable, Hashable, Codable {
    /// Stable for the library's life (Subsonic's `musicFolderId`).
    public var id: Int
    /// Unique without regard to case.
    public var name: String
    /// The roots, in path order.
    public var roots: [String]
    public var created: Date

    /// Builds a value; the store creates libraries through `addLibrary`.
    public init(id: Int, name: String, roots: [String], created: Date) {
        self.id = id
        self.name = name
        self.roots = roots
        self.created = created
    }
}

/// A library as `shelf library list` shows it: what it holds and whether its roots are there.
public struct LibrarySummary: Sendable, Codable, Equatable {
    public var id: Int
    public var name: String
    public var roots: [RootState]
    /// Tracks under its roots (missing ones included).
    public var tracks: Int
    /// Distinct album artist and album pairs among them.
    public var albums: Int
    /// The sum of the tracks' file sizes.
    public var bytes: Int64

    /// One root and whether its files can be read now.
    public struct RootState: Sendable, Codable, Equatable {
        public var path: String
        /// `online` or `offline`.
        public var state: String
        /// Why an offline root is offline (`RootReport.reason`).
        public var reason: String?
    }
}

/// What removing a library took with it (`shelf library remove --delete-tracks`).
public struct LibraryRemoval: Sendable, Codable, Equatable {
    public var library: String
    public var tracks: Int
    /// Users' stars on those tracks.
    public var stars: Int
    /// Users' ratings of those tracks (and the library's own).
    public var ratings: Int
    /// Playlist items that named those tracks.
    public var playlistEntries: Int
}

/// What a reader may see: the tracks under the roots of their libraries, or everything (an
/// admin, or a user with access to all libraries, also sees tracks outside every root).
public struct LibraryScope: Sendable, Hashable, CustomStringConvertible {
    /// The visible libraries' IDs, ascending; nil: every library.
    public let libraries: [Int]?
    /// Their roots, in path order; nil: everything.
    public let roots: [String]?

    /// Everything.
    public static let all = LibraryScope(libraries: nil, roots: nil)

    /// The scope of the reader this task serves, which every read of `Library` defaults to: the
    /// server sets it once around each signed-in request, so that no read can forget it (a
    /// forgotten scope would show another library's tracks). Everything outside a request.
    @TaskLocal public static var current: LibraryScope = .all

    /// A scope of these libraries and their roots.
    public init(libraries: [Int]?, roots: [String]?) {
        self.libraries = libraries?.sorted()
        self.roots = roots?.sorted()
    }

    /// Whether nothing is hidden.
    public var isAll: Bool { roots == nil }

    /// Whether a library is visible.
    public func sees(library id: Int) -> Bool { libraries?.contains(id) ?? true }

    /// Whether the file at `path` is visible.
    public func contains(path: String) -> Bool {
        guard let roots else { return true }
        return roots.contains { Library.isPath(path, under: $0) }
    }

    /// The filter that keeps the visible tracks (`.all` for everything; nothing without roots).
    public var filter: Filter {
        guard let roots else { return .all }
        return .or(roots.map { .text(.path, .prefix($0 == "/" ? "/" : $0 + "/")) })
    }

    /// `filter` narrowed to this scope.
    public func narrowing(_ filter: Filter) -> Filter {
        guard !isAll else { return filter }
        if case .all = filter { return self.filter }
        return .and([self.filter, filter])
    }

    /// This scope narrowed to the libraries of `ids` (those it cannot see stay hidden).
    public func limited(to ids: [Int], roots byLibrary: [Int: [String]]) -> LibraryScope {
        let visible = ids.filter { sees(library: $0) }
        return LibraryScope(libraries: visible, roots: visible.flatMap { byLibrary[$0] ?? [] })
    }

    public var description: String { libraries.map { "libraries \($0)" } ?? "all libraries" }
}

/// How libraries and users' access lists are stored.
enum MusicLibraries {
    /// A user's stored access list (a JSON array of IDs); anything unreadable sees nothing.
    static func decodeIDs(_ text: String) -> [Int] {
        (try? JSONDecoder().decode([Int].self, from: Data(text.utf8))) ?? []
    }

    static func encodeIDs(_ ids: [Int]?) -> String? {
        guard let ids else { return nil }
        return "[" + Array(Set(ids)).sorted().map(String.init).joined(separator: ",") + "]"
    }

    /// Names are shown in lists, URLs and apps' folder pickers: 1–64 characters, no control
    /// characters, no spaces at either end, and no `=` or `,` (which `--music NAME=DIR` and
    /// `--libraries A,B` split on).
    static func checkName(_ name: String) throws {
        func refuse(_ reason: String) -> LibraryError { .invalidValue(field: "library name", value: name.debugDescription, reason: reason) }
        if let problem = UserRows.nameProblem(name) { throw refuse(problem.reason) }
        if name.contains("=") || name.contains(",") { throw refuse("must not contain '=' or ','") }
        if name.lowercased() == "all" { throw refuse("'all' stands for every library in --libraries") }
    }
}

extension LibraryQuery {
    /// The same list narrowed to `scope`.
    public func within(_ scope: LibraryScope) -> LibraryQuery {
        var query = self
        query.filter = scope.narrowing(filter)
        return query
    }
}

extension SearchScope {
    /// The same search narrowed to `scope`.
    public func within(_ scope: LibraryScope) -> SearchScope {
        var search = self
        search.filter = scope.narrowing(filter)
        return search
    }
}
