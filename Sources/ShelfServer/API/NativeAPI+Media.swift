import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Media: pictures at served sizes, and streams (files and transcodes).
extension NativeAPI {
    /// The routes of this group.
    var mediaRoutes: [Route] {
        [
            Route("GET", "/api/artwork/{artworkID}", query: ["size", "format"]) { request in
                guard let uuid = UUID(uuidString: request.parameters["artworkID"] ?? "") else {
                    throw HTTPError.badRequest("'\(request.parameters["artworkID"] ?? "")' is not an artwork ID", code: "invalidValue")
                }
                // A picture only another library's tracks show is none, as one that does not exist.
                guard try await library.artworkVisible(ArtworkID(uuid)) else { throw LibraryError.artworkNotFound(ArtworkID(uuid)) }
                return try await context.artwork.respond(
                    ArtworkID(uuid), size: try request.int("size", in: 1...100_000) ?? 300, format: try Self.imageFormat(request),
                    ifNoneMatch: request.http.headers["if-none-match"], cacheControl: "public, max-age=31536000, immutable")
            },
            Route("GET", "/api/tracks/{id}/artwork", query: ["size", "format"]) { request in
                let id = TrackID(try request.id("id", what: "track"))
                guard let track = try await library.track(id) else { throw LibraryError.trackNotFound(id) }
                guard let artworkID = track.artworkID else { throw HTTPError.notFound("track \(id) has no picture") }
                return try await context.artwork.respond(
                    artworkID, size: try request.int("size", in: 1...100_000) ?? 300, format: try Self.imageFormat(request),
                    ifNoneMatch: request.http.headers["if-none-match"], cacheControl: "private, max-age=60")
            },
            Route("GET", "/api/stream/{id}", query: ["format", "bitRate", "timeOffset"], stream),
            Route("GET", "/api/podcasts/episodes/{id}/stream", query: ["format", "bitRate", "timeOffset"], streamEpisode),
        ]
    }

    static func imageFormat(_ request: RouteRequest) throws(HTTPError) -> ArtworkResponder.Format {
        guard let text = request.query("format") else { return .jpeg }
        guard let format = ArtworkResponder.Format(rawValue: text) else {
            throw HTTPError.badRequest("format expects jpeg or png, got '\(text)'", code: "invalidValue")
        }
        return format
    }

    func stream(_ request: RouteRequest) async throws -> HTTPResponse {
        let user = try Self.streamer(request)
        let id = TrackID(try request.id("id", what: "track"))
        guard let track = try await library.track(id) else { throw LibraryError.trackNotFound(id) }
        return try streamResponse(StreamResponder.Source(track), user: user, request)
    }

    /// A downloaded podcast episode, as `stream` answers for a track (the page's player plays it).
    func streamEpisode(_ request: RouteRequest) async throws -> HTTPResponse {
        let user = try Self.streamer(request)
        let id = SavedID(try request.id("id", what: "podcast episode"))
        guard let episode = try await library.podcastEpisode(id), let url = context.podcasts.fileURL(episode) else {
            throw HTTPError.notFound("podcast episode \(id) is not downloaded")
        }
        let source = StreamResponder.Source(path: url.path, codec: episode.codec, duration: episode.duration, name: "pe-\(id)", bitRate: episode.bitRate)
        return try streamResponse(source, user: user, request)
    }

    /// The signed-in user, who must have the stream role (whichever API asks).
    private static func streamer(_ request: RouteRequest) throws -> User {
        let user = try request.signedIn
        guard user.may(.stream) else { throw HTTPError.forbidden("this user may not stream") }
        return user
    }

    /// `source` as the query asks: the file itself (no format, or `raw`), or a transcode. The
    /// original file goes only to a user with the download role, as on /rest/: others get Opus at
    /// their bit-rate limit (else 128 kbit/s) when they name no format, and 403 for `raw`.
    private func streamResponse(_ source: StreamResponder.Source, user: User, _ request: RouteRequest) throws -> HTTPResponse {
        let originals = user.may(.download)
        if request.query("format") == "raw" && !originals {
            throw HTTPError.forbidden("this user may stream but not download original files: ask for a format, or for the download role")
        }
        guard let formatText = request.query("format") ?? (originals ? nil : "opus"), formatText != "raw" else {
            if request.query("bitRate") != nil || request.query("timeOffset") != nil {
                throw HTTPError.badRequest("bitRate and timeOffset need format (opus, mp3, aac or flac)", code: "invalidValue")
            }
            return try context.streams.file(source, request: request.http)
        }
        // A preset of the config file (`format=mobile`) names a format and its bit rate.
        let preset = context.streams.presets[formatText]
        guard let format = preset?.format ?? StreamResponder.TranscodeFormat(rawValue: formatText) else {
            let names = (["raw"] + StreamResponder.TranscodeFormat.allCases.map(\.rawValue) + context.streams.presets.keys.sorted()).joined(separator: ", ")
            throw HTTPError.badRequest("format expects one of \(names), got '\(formatText)'", code: "invalidValue")
        }
        var bitRate = try request.int("bitRate", in: 32...320) ?? preset?.bitRate ?? 128
        if user.maxBitRate > 0 { bitRate = max(32, min(bitRate, user.maxBitRate)) }
        let offset: Double
        if let text = request.query("timeOffset") {
            guard let value = Double(text), value >= 0, value < 86_400 else {
                throw HTTPError.badRequest("timeOffset expects seconds from 0, got '\(text)'", code: "invalidValue")
            }
            offset = value
        } else {
            offset = 0
        }
        return try context.streams.transcode(source, format: format, bitRate: bitRate, timeOffset: offset)
    }
}
