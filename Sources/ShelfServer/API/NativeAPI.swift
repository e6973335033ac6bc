import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// The native JSON API under `/api/`: the command line's documents (ShelfWire) over HTTP, plus
/// sessions, per-user data, artwork, streaming and events. Handlers only call the engine's public
/// API; every write goes through a write batch.
struct NativeAPI: Sendable {
    let context: ServerContext

    var library: Library { context.library }

    /// The query parameters of a track list: sort, sort tags and filter.
    static let listQuery = ["sort", "sortTags", "filter"]

    /// Every route of the native API, by group (each group and its handlers in `NativeAPI+GROUP.swift`).
    var routes: [Route] {
        sessionRoutes + trackRoutes + libraryRoutes + playlistRoutes + userDataRoutes + listenRoutes + sonicRoutes + historyRoutes + mediaRoutes + jobRoutes
            + adminRoutes
    }
}

// MARK: Parameters every group reads

extension NativeAPI {
    /// A track list's `sort` (artist by default), `sortTags` and `filter`.
    static func query(_ request: RouteRequest) throws -> LibraryQuery {
        try Parameters.query(
            sort: request.query("sort") ?? "artist", sortTags: request.query("sortTags"),
            filter: try Parameters.filter(request.query("filter") ?? ""))
    }
}

extension RouteRequest {
    /// `limit`: 0 to 10,000 rows, 50 unless given.
    func limit() throws(HTTPError) -> Int { try int("limit", in: 0...10_000) ?? 50 }

    /// `after`: the cursor a page ended with, if given.
    func after() throws(WireInputError) -> PageCursor? {
        try query("after").map { text throws(WireInputError) in try Parameters.cursor(text) }
    }
}
