// Play started the way an embedded Play app is (compile-time components, no Guice, no routes
// file): BuiltInComponentsFromContext gives the Application, its ActorSystem and default
// dispatcher; PekkoHttpServerProvider serves it. Play's Java Server.forRouter would listen on
// 0.0.0.0, so the ServerConfig is made here, bound to 127.0.0.1.
package iolab.play;

import java.io.File;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;
import java.util.function.Function;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.dispatch.Dispatcher;
import play.ApplicationLoader;
import play.BuiltInComponents;
import play.BuiltInComponentsFromContext;
import play.Environment;
import play.Mode;
import play.core.server.PekkoHttpServerProvider;
import play.core.server.Server;
import play.core.server.ServerConfig;
import play.mvc.EssentialFilter;
import play.routing.Router;
import scala.Option;

final class PlayServer {
    final play.api.Application app;
    final Server server;

    private PlayServer(play.api.Application app, Server server) {
        this.app = app;
        this.server = server;
    }

    /** The application's components, for the router to use. */
    static BuiltInComponents components(Map<String, Object> config, Function<BuiltInComponents, Router> routes) {
        Environment env = new Environment(new File("."), PlayServer.class.getClassLoader(), Mode.PROD);
        ApplicationLoader.Context context = new ApplicationLoader.Context(env, config);
        return new BuiltInComponentsFromContext(context) {
            @Override
            public Router router() {
                return routes.apply(this);
            }

            @Override
            public List<EssentialFilter> httpFilters() {
                return List.of(); // no filters: the contract's answers, nothing added
            }
        };
    }

    /** Start the application and its server on 127.0.0.1:{@code port} (0: a free port). */
    static PlayServer start(BuiltInComponents components, int port) {
        play.api.Application app = components.application().asScala();
        play.api.Play.start(app);
        ServerConfig config = new ServerConfig(new File("."), Option.<Object>apply(port), Option.empty(), "127.0.0.1",
                play.api.Mode.Prod$.MODULE$, System.getProperties(), app.configuration());
        Server server = new PekkoHttpServerProvider().createServer(config, app);
        return new PlayServer(app, server);
    }

    int port() {
        return (Integer) server.httpPort().get();
    }

    /** Play's default dispatcher: where Pekko HTTP parses and Play runs actions. */
    static ForkJoinPool defaultPool(ActorSystem system) {
        if (system.dispatcher() instanceof Dispatcher d && d.executorService().executor() instanceof ForkJoinPool p) {
            return p;
        }
        return null;
    }
}
