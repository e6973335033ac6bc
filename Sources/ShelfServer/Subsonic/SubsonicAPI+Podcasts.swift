import Foundation
import Shelf
import ShelfCore

/// Podcasts: channels (`pc-N`) the server follows and their episodes (`pe-N`), fetched in the
/// background by `PodcastService`. Reading is for every user; subscribing, refreshing,
/// downloading and deleting need the podcast role (admins have it).
extension SubsonicAPI {
    private func channelID(_ call: SubsonicCall) throws(SubsonicError) -> SavedID {
        try call.parameters.saved(prefix: "pc-", what: "podcast channel")
    }

    private func episodeID(_ call: SubsonicCall) throws(SubsonicError) -> SavedID {
        try call.parameters.saved(prefix: "pe-", what: "podcast episode")
    }

    private func requirePodcastRole(_ call: SubsonicCall, _ what: String) throws(SubsonicError) {
        try Self.require(.podcast, of: try call.signedIn, for: what)
    }

    /// getPodcasts: every channel (or the one `id` names), with its episodes unless `includeEpisodes=false`.
    func getPodcasts(_ call: SubsonicCall) async throws -> SubsonicReply {
        _ = try call.signedIn
        let include = try call.parameters.bool("includeEpisodes") ?? true
        var channels: [PodcastChannel]
        if call.parameters.value("id") != nil {
            let id = try channelID(call)
            guard let channel = try await library.podcastChannel(id) else { throw SubsonicError.notFound("podcast channel pc-\(id)") }
            channels = [channel]
        } else {
            channels = try await library.podcastChannels()
        }
        var models: [SubsonicPodcastChannel] = []
        for channel in channels {
            let episodes = include ? try await library.podcastEpisodes(of: channel.id) : nil
            models.append(SubsonicPodcastChannel(channel: channel, episodes: episodes))
        }
        return .container("podcasts", "channel", models)
    }

    /// getNewestPodcasts: the newest episodes of all channels, `count` of them (20 by default).
    func getNewestPodcasts(_ call: SubsonicCall) async throws -> SubsonicReply {
        _ = try call.signedIn
        let count = try call.parameters.int("count", default: 20, in: 0...500) ?? 20
        let episodes = try await library.newestPodcastEpisodes(count: count)
        let channels = Dictionary(try await library.podcastChannels().map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        return .container("newestPodcasts", "episode", episodes.map { SubsonicPodcastEpisode(episode: $0, channel: channels[$0.channel]) })
    }

    /// getPodcastEpisode (extension): one episode.
    func getPodcastEpisode(_ call: SubsonicCall) async throws -> SubsonicReply {
        _ = try call.signedIn
        let id = try episodeID(call)
        guard let episode = try await library.podcastEpisode(id) else { throw SubsonicError.notFound("podcast episode pe-\(id)") }
        return .element("podcastEpisode", SubsonicPodcastEpisode(episode: episode, channel: try await library.podcastChannel(episode.channel)))
    }

    /// refreshPodcasts: every channel's feed read again, in the background.
    func refreshPodcasts(_ call: SubsonicCall) async throws -> SubsonicReply {
        try requirePodcastRole(call, "refresh podcasts")
        await context.podcasts.refreshAll()
        return .empty
    }

    /// createPodcastChannel: `url`, an http or https feed; read in the background (the channel's
    /// `status` and `errorMessage` tell how it went).
    func createPodcastChannel(_ call: SubsonicCall) async throws -> SubsonicReply {
        try requirePodcastRole(call, "subscribe to podcasts")
        _ = try await context.podcasts.subscribe(try call.parameters.required("url"))
        return .empty
    }

    /// deletePodcastChannel: the channel, its episodes and their files.
    func deletePodcastChannel(_ call: SubsonicCall) async throws -> SubsonicReply {
        try requirePodcastRole(call, "delete podcasts")
        try await context.podcasts.deleteChannel(try channelID(call))
        return .empty
    }

    /// deletePodcastEpisode: the episode's file; it stays listed as `deleted`.
    func deletePodcastEpisode(_ call: SubsonicCall) async throws -> SubsonicReply {
        try requirePodcastRole(call, "delete podcast episodes")
        try await context.podcasts.deleteEpisode(try episodeID(call))
        return .empty
    }

    /// downloadPodcastEpisode: starts the download in the background.
    func downloadPodcastEpisode(_ call: SubsonicCall) async throws -> SubsonicReply {
        try requirePodcastRole(call, "download podcast episodes")
        try await context.podcasts.download(try episodeID(call))
        return .empty
    }

    /// The file source of episode `pe-N` for stream and download; nil when `text` is no episode ID.
    func episodeSource(_ text: String) async throws -> StreamResponder.Source? {
        guard let id = SubsonicParameters.saved(text, prefix: "pe-") else { return nil }
        guard let episode = try await library.podcastEpisode(id), let url = context.podcasts.fileURL(episode) else {
            throw SubsonicError.notFound("downloaded podcast episode \(text)")
        }
        return StreamResponder.Source(path: url.path, codec: episode.codec, duration: episode.duration, name: text, bitRate: episode.bitRate)
    }

    /// The picture of channel `pc-N` (or of episode `pe-N`'s channel); nil when `text` is neither.
    func podcastPicture(_ text: String) async throws -> URL? {
        let channelID: SavedID
        if let id = SubsonicParameters.saved(text, prefix: "pc-") {
            channelID = id
        } else if let id = SubsonicParameters.saved(text, prefix: "pe-") {
            guard let episode = try await library.podcastEpisode(id) else { throw SubsonicError.notFound("podcast episode \(text)") }
            channelID = episode.channel
        } else {
            return nil
        }
        guard let channel = try await library.podcastChannel(channelID), let url = context.podcasts.imageURL(channel) else {
            throw SubsonicError.notFound("cover art of '\(text)'")
        }
        return url
    }
}

/// A channel as the spec shows one, with its episodes when asked.
struct SubsonicPodcastChannel: SubsonicModel {
    let channel: PodcastChannel
    /// nil: not asked for (no `episode` list at all).
    let episodes: [PodcastEpisode]?

    func write(to w: inout SubsonicWriter) {
        w.attribute("id", "pc-\(channel.id.rawValue)")
        w.attribute("url", channel.url)
        w.attribute("title", channel.title.isEmpty ? channel.url : channel.title)
        w.attribute("description", channel.description)
        if channel.imageFile != nil { w.attribute("coverArt", "pc-\(channel.id.rawValue)") }
        w.attribute("originalImageUrl", channel.imageURL)
        w.attribute("status", channel.status.rawValue)
        w.attribute("errorMessage", channel.errorMessage)
        if let episodes { w.list("episode", episodes.map { SubsonicPodcastEpisode(episode: $0, channel: channel) }) }
    }
}

/// An episode: the spec's Child (so players list and play it like a song) with the podcast fields.
struct SubsonicPodcastEpisode: SubsonicModel {
    let episode: PodcastEpisode
    let channel: PodcastChannel?

    func write(to w: inout SubsonicWriter) {
        let id = "pe-\(episode.id.rawValue)"
        let channelID = "pc-\(episode.channel.rawValue)"
        let completed = episode.status == .completed && episode.file != nil
        let suffix = episode.file.map { StreamResponder.fileSuffix($0) }
        w.attribute("id", id)
        w.attribute("parent", channelID)
        w.attribute("isDir", false)
        w.attribute("title", episode.title.isEmpty ? id : episode.title)
        w.attribute("album", channel?.title ?? "")
        w.attribute("artist", channel?.title ?? "")
        if let published = episode.published {
            w.attribute("year", Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: published).year)
        }
        w.attribute("genre", "Podcast")
        if channel?.imageFile != nil { w.attribute("coverArt", channelID) }
        if completed {
            w.attribute("size", episode.size.map { Int($0) })
            w.attribute("contentType", StreamResponder.mimeType(suffix: suffix ?? "", codec: episode.codec))
            w.attribute("suffix", suffix)
            w.attribute("bitRate", episode.bitRate)
        }
        w.attribute("duration", episode.duration.map { $0 > 0 ? max(1, Int($0.rounded())) : 0 })
        w.attribute("isVideo", false)
        w.attribute("created", episode.created)
        w.attribute("type", "podcast")
        if completed { w.attribute("streamId", id) }
        w.attribute("channelId", channelID)
        w.attribute("description", episode.description)
        w.attribute("status", episode.status.rawValue)
        w.attribute("errorMessage", episode.errorMessage)
        w.attribute("publishDate", episode.published)
    }
}
