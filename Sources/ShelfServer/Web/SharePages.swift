import Foundation
import Shelf
import ShelfCore

/// The public side of shares: `/share/TOKEN` is a small page that plays the shared songs, and
/// `/share/TOKEN/stream/N` and `/share/TOKEN/cover/N` the N-th song's file and cover. Songs are
/// named by their place in the share, never by track ID, so a token reaches nothing but its own
/// songs. Every request looks the token up in the store: a deleted or expired share, or sharing
/// turned off, is 404 at once. The page has no script and carries the main page's policy.
struct SharePages: Sendable {
    let context: ServerContext

    var routes: [Route] {
        [
            Route("GET", "/share/{token}", access: .anyone) { request in try await page(request) },
            Route("GET", "/share/{token}/stream/{index}", access: .anyone, query: nil) { request in try await stream(request) },
            Route("GET", "/share/{token}/cover/{index}", access: .anyone, query: ["size"]) { request in try await cover(request) },
        ]
    }

    private static let headers = [
        ("Content-Security-Policy", WebPage.contentSecurityPolicy), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
    ]

    /// The open share of the request's token, or 404 (one answer for unknown, expired and deleted).
    private func share(_ request: RouteRequest) async throws -> Share {
        let token = request.parameters["token"] ?? ""
        // `shelf serve --sharing off` (read on each request, so a reload applies at once) closes every link.
        guard context.sharing.withLock({ $0 }), let share = try await context.library.share(token: token), share.isOpen(at: Date()) else {
            throw HTTPError.notFound("no such share")
        }
        return share
    }

    /// `body` within what the share's creator may see now: a share never shows more than its
    /// creator could (a song of a library they lost is gone from it, as a deleted one).
    private func asCreator<T: Sendable>(_ share: Share, _ body: () async throws -> T) async throws -> T {
        let creator = try await context.library.user(id: share.user)
        var scope = LibraryScope(libraries: [], roots: [])
        if let creator { scope = try await context.library.scope(for: creator) }
        return try await LibraryScope.$current.withValue(scope) { try await body() }
    }

    /// The share's N-th song (from 0).
    private func track(_ request: RouteRequest, _ share: Share) throws -> TrackID {
        guard let text = request.parameters["index"], let index = Int(text), String(index) == text, share.tracks.indices.contains(index) else {
            throw HTTPError.notFound("no such song in this share")
        }
        return share.tracks[index]
    }

    private func page(_ request: RouteRequest) async throws -> HTTPResponse {
        let share = try await share(request)
        try await context.library.write { batch in try batch.recordShareVisit(share.id) }
        let tracks = try await asCreator(share) { try await context.library.tracks(ids: share.tracks, fields: .song).tracks }
        let byID = Dictionary(tracks.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let token = share.token
        var items = ""
        for (index, id) in share.tracks.enumerated() {
            guard let track = byID[id] else { continue }
            let title = Self.escape(track.title ?? URL(fileURLWithPath: track.path).deletingPathExtension().lastPathComponent)
            let artist = Self.escape(track.artist ?? "")
            let cover =
                track.artworkID != nil ? "<img src=\"\(request.http.link("/share/\(token)/cover/\(index)"))?size=96\" width=\"48\" height=\"48\" alt=\"\">" : ""
            items +=
                "<li>\(cover)<span>\(title)</span> <small>\(artist)</small><br><audio controls preload=\"none\" src=\"\(request.http.link("/share/\(token)/stream/\(index)"))\"></audio></li>\n"
        }
        let heading = Self.escape(share.description.isEmpty ? "Shared music" : share.description)
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="robots" content="noindex"><title>\(heading)</title></head>
            <body><h1>\(heading)</h1><ol>
            \(items)</ol></body></html>
            """
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")] + Self.headers, body: .data(Data(html.utf8)))
    }

    private func stream(_ request: RouteRequest) async throws -> HTTPResponse {
        let share = try await share(request)
        var response = try await asCreator(share) { try await context.streams.file(try track(request, share), request: request.http) }
        response.headers += [("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer")]
        return response
    }

    private func cover(_ request: RouteRequest) async throws -> HTTPResponse {
        let share = try await share(request)
        let id = try track(request, share)
        guard let artwork = try await asCreator(share, { try await context.library.track(id)?.artworkID }) else {
            throw HTTPError.notFound("this song has no cover")
        }
        let size = try request.int("size", in: 1...2_000) ?? 600
        return try await context.artwork.respond(
            artwork, size: size, format: .jpeg, ifNoneMatch: request.http.headers["if-none-match"], cacheControl: "private, no-store")
    }

    /// Text for HTML.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
