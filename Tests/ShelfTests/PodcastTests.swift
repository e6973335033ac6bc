import Foundation
import ShelfCore
import ShelfTestSupport
import Testing

@testable import Shelf

/// Podcast feeds as read (RSS 2.0 with the iTunes namespace, Atom, the broken kinds) and podcast
/// rows as stored: a refresh keeps what was downloaded or deleted, a download completes only while
/// the episode is still being downloaded.
@Suite struct PodcastTests {
    @Test func anRSSFeedWithTheITunesNamespace() throws {
        let feed = try PodcastFeed.parse(
            Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:content="http://purl.org/rss/1.0/modules/content/">
                <channel>
                  <title>  Shelf   Talk </title>
                  <itunes:summary>Short</itunes:summary>
                  <description><![CDATA[<p>Long &amp; <b>rich</b></p>]]></description>
                  <image><url>https://example.org/small.png</url></image>
                  <itunes:image href="https://example.org/big.jpg"/>
                  <item>
                    <title>One</title><guid>g1</guid><pubDate>Mon, 2 Nov 2026 10:00:00 +0100</pubDate>
                    <itunes:summary>summary</itunes:summary><description>described</description>
                    <itunes:duration>1:02:03</itunes:duration>
                    <enclosure url="https://example.org/1.mp3" type="audio/mpeg" length="123"/>
                  </item>
                  <item><title>Two</title><pubDate>Tue, 03 Nov 2026 10:00 GMT</pubDate><itunes:duration>95</itunes:duration>
                    <enclosure url="https://example.org/2.m4a" type="audio/mp4" length="0"/></item>
                  <item><title>Three</title><guid>g3</guid><itunes:duration>soon</itunes:duration></item>
                </channel>
                </rss>
                """.utf8))
        #expect(feed.title == "Shelf Talk" && feed.description == "Long & rich" && feed.imageURL == "https://example.org/big.jpg")
        #expect(feed.items.map(\.guid) == ["g1", "https://example.org/2.m4a", "g3"])
        let one = feed.items[0]
        #expect(one.description == "described" && one.duration == 3723 && one.length == 123 && one.mimeType == "audio/mpeg")
        #expect(one.published == Date(timeIntervalSince1970: 1_793_610_000))
        #expect(feed.items[1].duration == 95 && feed.items[1].length == nil && feed.items[1].published != nil)
        #expect(feed.items[2].url == nil && feed.items[2].duration == nil)
    }

    @Test func anAtomFeed() throws {
        let feed = try PodcastFeed.parse(
            Data(
                """
                <feed xmlns="http://www.w3.org/2005/Atom"><title>Atom</title><subtitle>Sub</subtitle><logo>https://example.org/l.png</logo>
                <entry><id>urn:1</id><title>E</title><updated>2026-11-20T08:30:00.250Z</updated><content type="html">&lt;i&gt;x&lt;/i&gt;</content>
                <link rel="alternate" href="https://example.org/page"/><link rel="enclosure" href="https://example.org/e.ogg" type="audio/ogg" length="5"/></entry>
                </feed>
                """.utf8))
        #expect(feed.title == "Atom" && feed.description == "Sub" && feed.imageURL == "https://example.org/l.png")
        #expect(feed.items.count == 1 && feed.items[0].url == "https://example.org/e.ogg" && feed.items[0].description == "x")
        #expect(feed.items[0].published == Date(timeIntervalSince1970: 1_795_163_400.25))
    }

    @Test func brokenDocumentsSayWhy() {
        func reason(_ text: String) -> String {
            do {
                _ = try PodcastFeed.parse(Data(text.utf8))
                return "parsed"
            } catch {
                return error.message
            }
        }
        #expect(reason("<rss><channel><title>x</channel></rss>").contains("line 1") == true)
        #expect(reason("<rss><channel><title>x</channel></rss>").contains("does not match"))
        #expect(reason("").contains("not well-formed") || reason("").contains("empty"))
        #expect(reason("<html><body>Not a feed</body></html>").contains("neither an RSS 2.0 channel nor an Atom feed (its root is <html>)"))
        // An external entity is never read (XMLParser resolves none).
        let xxe = "<!DOCTYPE rss [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><rss><channel><title>&x;</title></channel></rss>"
        #expect((try? PodcastFeed.parse(Data(xxe.utf8)))?.title.contains("root:") != true)
    }

    @Test func aRefreshKeepsDownloadsAndDeletions() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        let channel = try await library.write { try $0.addPodcastChannel(url: "https://example.org/feed.xml") }
        await #expect(throws: LibraryError.self) { try await library.write { try $0.addPodcastChannel(url: "https://example.org/feed.xml") } }
        await #expect(throws: LibraryError.self) { try await library.write { try $0.addPodcastChannel(url: "file:///etc/passwd") } }
        func item(_ guid: String, _ title: String) -> PodcastFeed.Item {
            PodcastFeed.Item(
                guid: guid, title: title, description: "", published: nil, url: "https://example.org/\(guid).mp3",
                mimeType: nil, length: nil, duration: 60)
        }
        let feed = PodcastFeed(title: "T", description: "D", imageURL: nil, items: [item("a", "A"), item("b", "B"), item("c", "C")])
        let added = try await library.write { try $0.savePodcastFeed(channel.id, feed) }
        #expect(added.count == 3)
        let (a, b, c) = (added[0], added[1], added[2])
        try await library.write { batch in
            try batch.setPodcastEpisodeStatus(a, .downloading)
            try batch.completePodcastEpisode(a, file: "\(a).mp3", size: 10, audio: PodcastAudio(duration: 59.5, bitRate: 128, codec: "mp3"))
            try batch.setPodcastEpisodeStatus(b, .deleted)
            try batch.setPodcastEpisodeStatus(c, .downloading)
            try batch.setPodcastEpisodeStatus(c, .deleted)
        }
        // A download finishing after its episode was deleted does not bring it back.
        await #expect(throws: LibraryError.self) {
            try await library.write {
                try $0.completePodcastEpisode(c, file: "\(c).mp3", size: 1, audio: PodcastAudio(duration: nil, bitRate: nil, codec: nil))
            }
        }
        await #expect(throws: LibraryError.self) { try await library.write { try $0.setPodcastEpisodeStatus(a, .completed) } }
        let again = PodcastFeed(title: "T2", description: "D", imageURL: nil, items: [item("a", "A2"), item("b", "B"), item("d", "D")])
        #expect(try await library.write { try $0.savePodcastFeed(channel.id, again) }.count == 1)
        let episodes = Dictionary(try await library.podcastEpisodes(of: channel.id).map { ($0.guid, $0) }, uniquingKeysWith: { x, _ in x })
        #expect(episodes["a"]?.status == .completed && episodes["a"]?.title == "A2" && episodes["a"]?.file == "\(a).mp3" && episodes["a"]?.duration == 59.5)
        #expect(episodes["b"]?.status == .deleted && episodes["c"]?.status == .deleted && episodes["d"]?.status == .new)
        #expect(try await library.podcastChannel(channel.id)?.title == "T2")
        try await library.write { try $0.deletePodcastChannel(channel.id) }
        #expect(try await library.podcastEpisode(a) == nil)
        #expect(try await library.podcastChannels().isEmpty)
    }
}
