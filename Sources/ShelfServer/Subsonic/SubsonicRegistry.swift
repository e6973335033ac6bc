import Foundation

/// Every endpoint of the OpenSubsonic API in one place, in the spec's sections and order: its
/// handler (in the file of its section), who may call it, and whether Shelf serves it.
extension SubsonicAPI {
    /// A handler: one call in, one answer out; errors become the failed envelope.
    typealias Handler = @Sendable (SubsonicAPI, SubsonicCall) async throws -> SubsonicReply

    /// Who may call an endpoint.
    enum Access: Sendable {
        /// Without credentials (getOpenSubsonicExtensions: clients ask before signing in).
        case anyone
        /// Any signed-in user.
        case user
        /// Admins only (error 50 for others).
        case admin
    }

    /// Whether Shelf answers an endpoint.
    enum Policy: Sendable {
        case served(Handler)
        /// Not yet: HTTP 501 with a failed body.
        case notImplemented
        /// Never, for the reason given: HTTP 410 with a failed body.
        case never(String)
    }

    /// The spec's sections, each a file of handlers (`SubsonicAPI+Browsing.swift`, …).
    enum Section: String, CaseIterable, Sendable {
        case system = "System"
        case browsing = "Browsing"
        case lists = "Album/song lists"
        case searching = "Searching"
        case playlists = "Playlists"
        case mediaRetrieval = "Media retrieval"
        case annotation = "Media annotation"
        case sharing = "Sharing"
        case podcast = "Podcast"
        case jukebox = "Jukebox"
        case radio = "Internet radio"
        case chat = "Chat"
        case users = "User management"
        case bookmarks = "Bookmarks"
        case scanning = "Media library scanning"
        /// Not the spec's: Shelf's own extensions.
        case extensions = "Shelf extensions"
    }

    /// One endpoint: its name (served as `/rest/NAME` and `/rest/NAME.view`), section, access and policy.
    struct Endpoint: Sendable {
        let name: String
        let section: Section
        let access: Access
        let policy: Policy
    }

    /// The extensions advertised by getOpenSubsonicExtensions: only what is implemented.
    static let extensions: [SubsonicExtension] = [
        SubsonicExtension(name: "formPost", versions: [1]), SubsonicExtension(name: "apiKeyAuthentication", versions: [1]),
        SubsonicExtension(name: "transcodeOffset", versions: [1]), SubsonicExtension(name: "songLyrics", versions: [1, 2]),
        SubsonicExtension(name: "indexBasedQueue", versions: [1]), SubsonicExtension(name: "playbackReport", versions: [1]),
        SubsonicExtension(name: "getPodcastEpisode", versions: [1]), SubsonicExtension(name: "transcoding", versions: [1]),
        // Shelf's own (docs/extension-shelfSync.md, docs/extension-shelfAlphabetIndex.md).
        SubsonicExtension(name: "shelfSync", versions: [1]), SubsonicExtension(name: "shelfAlphabetIndex", versions: [1]),
    ]

    private static let video = "Shelf is a music library; it keeps no video"
    private static let chatReason = "chat is not part of a music library; apps have their own"

    /// Every endpoint of the spec, in its order.
    static let endpoints: [Endpoint] = {
        func served(_ name: String, _ section: Section, _ access: Access = .user, _ handler: @escaping Handler) -> Endpoint {
            Endpoint(name: name, section: section, access: access, policy: .served(handler))
        }
        func later(_ name: String, _ section: Section, _ access: Access = .user) -> Endpoint {
            Endpoint(name: name, section: section, access: access, policy: .notImplemented)
        }
        func never(_ name: String, _ section: Section, _ reason: String) -> Endpoint {
            Endpoint(name: name, section: section, access: .user, policy: .never(reason))
        }
        return [
            // System
            served("ping", .system) { _, _ in .empty },
            served("getLicense", .system) { _, _ in .element("license", SubsonicLicense()) },
            served("getOpenSubsonicExtensions", .system, .anyone) { api, _ in
                // sonicSimilarity once analysis has given some track its features.
                let sonic = try await api.library.hasSonicFeatures() ? [SubsonicExtension(name: "sonicSimilarity", versions: [1])] : []
                return .body { $0.list("openSubsonicExtensions", extensions + sonic) }
            },
            served("tokenInfo", .system) { api, call in try api.tokenInfo(call) },
            // Browsing
            served("getMusicFolders", .browsing) { api, _ in try await api.getMusicFolders() },
            served("getIndexes", .browsing) { api, call in
                api.context.browseFolders.withLock { $0 }
                    ? try await api.folderIndexes(call) : try await api.artists(call, element: "indexes", lastModified: true)
            },
            served("getMusicDirectory", .browsing) { api, call in try await api.musicDirectory(call) },
            served("getGenres", .browsing) { api, _ in try await api.genres() },
            served("getArtists", .browsing) { api, call in try await api.artists(call, element: "artists", lastModified: false) },
            served("getArtist", .browsing) { api, call in try await api.getArtist(call) },
            served("getAlbum", .browsing) { api, call in try await api.getAlbum(call) },
            served("getSong", .browsing) { api, call in try await api.getSong(call) },
            never("getVideos", .browsing, video),
            never("getVideoInfo", .browsing, video),
            served("getArtistInfo", .browsing) { api, call in try await api.artistInfo(call, element: "artistInfo") },
            served("getArtistInfo2", .browsing) { api, call in try await api.artistInfo(call, element: "artistInfo2") },
            served("getAlbumInfo", .browsing) { api, call in try await api.albumInfo(call) },
            served("getAlbumInfo2", .browsing) { api, call in try await api.albumInfo(call) },
            served("getSimilarSongs", .browsing) { api, call in try await api.similarSongs(call, element: "similarSongs") },
            served("getSimilarSongs2", .browsing) { api, call in try await api.similarSongs(call, element: "similarSongs2") },
            served("getTopSongs", .browsing) { api, call in try await api.topSongs(call) },
            served("getSonicSimilarTracks", .browsing) { api, call in try await api.sonicSimilarTracks(call) },
            served("findSonicPath", .browsing) { api, call in try await api.findSonicPath(call) },
            // Album/song lists
            served("getAlbumList", .lists) { api, call in try await api.albumList(call, element: "albumList", child: true) },
            served("getAlbumList2", .lists) { api, call in try await api.albumList(call, element: "albumList2", child: false) },
            served("getRandomSongs", .lists) { api, call in try await api.randomSongs(call) },
            served("getSongsByGenre", .lists) { api, call in try await api.songsByGenre(call) },
            served("getNowPlaying", .lists) { api, call in try await api.getNowPlaying(call) },
            served("getStarred", .lists) { api, call in try await api.starred(call, element: "starred") },
            served("getStarred2", .lists) { api, call in try await api.starred(call, element: "starred2") },
            // Searching
            served("search", .searching) { api, call in try await api.searchV1(call) },
            served("search2", .searching) { api, call in try await api.search(call, element: "searchResult2", child: true) },
            served("search3", .searching) { api, call in try await api.search(call, element: "searchResult3", child: false) },
            // Playlists
            served("getPlaylists", .playlists) { api, call in try await api.getPlaylists(call) },
            served("getPlaylist", .playlists) { api, call in try await api.getPlaylist(call) },
            served("createPlaylist", .playlists) { api, call in try await api.createPlaylist(call) },
            served("updatePlaylist", .playlists) { api, call in try await api.updatePlaylist(call) },
            served("deletePlaylist", .playlists) { api, call in try await api.deletePlaylist(call) },
            // Media retrieval
            served("stream", .mediaRetrieval) { api, call in try await api.stream(call) },
            served("download", .mediaRetrieval) { api, call in try await api.download(call) },
            never("hls", .mediaRetrieval, "Shelf streams files and transcodes, not HLS playlists of video segments"),
            never("getCaptions", .mediaRetrieval, video),
            served("getCoverArt", .mediaRetrieval) { api, call in try await api.coverArt(call) },
            served("getLyrics", .mediaRetrieval) { api, call in try await api.lyrics(call) },
            served("getAvatar", .mediaRetrieval) { api, call in try await api.avatar(call) },
            served("getLyricsBySongId", .mediaRetrieval) { api, call in try await api.lyricsBySongID(call) },
            served("getTranscodeDecision", .mediaRetrieval) { api, call in try await api.transcodeDecision(call) },
            served("getTranscodeStream", .mediaRetrieval) { api, call in try await api.transcodeStream(call) },
            // Media annotation
            served("star", .annotation) { api, call in try await api.star(call, true) },
            served("unstar", .annotation) { api, call in try await api.star(call, false) },
            served("setRating", .annotation) { api, call in try await api.setRating(call) },
            served("scrobble", .annotation) { api, call in try await api.scrobble(call) },
            served("reportPlayback", .annotation) { api, call in try await api.reportPlayback(call) },
            // Sharing
            served("getShares", .sharing) { api, call in try await api.getShares(call) },
            served("createShare", .sharing) { api, call in try await api.createShare(call) },
            served("updateShare", .sharing) { api, call in try await api.updateShare(call) },
            served("deleteShare", .sharing) { api, call in try await api.deleteShare(call) },
            // Podcast
            served("getPodcasts", .podcast) { api, call in try await api.getPodcasts(call) },
            served("getNewestPodcasts", .podcast) { api, call in try await api.getNewestPodcasts(call) },
            served("refreshPodcasts", .podcast) { api, call in try await api.refreshPodcasts(call) },
            served("createPodcastChannel", .podcast) { api, call in try await api.createPodcastChannel(call) },
            served("deletePodcastChannel", .podcast) { api, call in try await api.deletePodcastChannel(call) },
            served("deletePodcastEpisode", .podcast) { api, call in try await api.deletePodcastEpisode(call) },
            served("downloadPodcastEpisode", .podcast) { api, call in try await api.downloadPodcastEpisode(call) },
            served("getPodcastEpisode", .podcast) { api, call in try await api.getPodcastEpisode(call) },
            // Jukebox
            served("jukeboxControl", .jukebox) { api, call in try await api.jukeboxControl(call) },
            // Internet radio
            served("getInternetRadioStations", .radio) { api, call in try await api.radioStations(call) },
            served("createInternetRadioStation", .radio, .admin) { api, call in try await api.createRadioStation(call) },
            served("updateInternetRadioStation", .radio, .admin) { api, call in try await api.updateRadioStation(call) },
            served("deleteInternetRadioStation", .radio, .admin) { api, call in try await api.deleteRadioStation(call) },
            // Chat
            never("getChatMessages", .chat, chatReason),
            never("addChatMessage", .chat, chatReason),
            // User management
            served("getUser", .users) { api, call in try await api.getUser(call) },
            served("getUsers", .users, .admin) { api, call in try await api.getUsers(call) },
            served("createUser", .users, .admin) { api, call in try await api.createUser(call) },
            served("updateUser", .users, .admin) { api, call in try await api.updateUser(call) },
            served("deleteUser", .users, .admin) { api, call in try await api.deleteUser(call) },
            served("changePassword", .users) { api, call in try await api.changePassword(call) },
            // Bookmarks
            served("getBookmarks", .bookmarks) { api, call in try await api.getBookmarks(call) },
            served("createBookmark", .bookmarks) { api, call in try await api.createBookmark(call) },
            served("deleteBookmark", .bookmarks) { api, call in try await api.deleteBookmark(call) },
            served("getPlayQueue", .bookmarks) { api, call in try await api.getPlayQueue(call) },
            served("savePlayQueue", .bookmarks) { api, call in try await api.savePlayQueue(call) },
            served("getPlayQueueByIndex", .bookmarks) { api, call in try await api.getPlayQueueByIndex(call) },
            served("savePlayQueueByIndex", .bookmarks) { api, call in try await api.savePlayQueueByIndex(call) },
            // Shelf's own extensions
            served("getLibraryChanges", .extensions) { api, call in try await api.libraryChanges(call) },
            served("getAlphabetIndex", .extensions) { api, call in try await api.alphabetIndex(call) },
            // Media library scanning
            served("getScanStatus", .scanning) { api, _ in try await api.scanStatus() },
            served("startScan", .scanning, .admin) { api, _ in try await api.startScan() },
        ]
    }()

    /// The endpoints by name.
    static let registry: [String: Endpoint] = Dictionary(endpoints.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
}
