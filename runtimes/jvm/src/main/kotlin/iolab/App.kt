// Entry point: validate the options, pick the web stack for the model, start Spring, and
// print the URL as the first stdout line once the server accepts requests.
package iolab

import org.apache.tomcat.util.threads.ThreadPoolExecutor
import org.springframework.boot.SpringApplication
import org.springframework.boot.WebApplicationType
import org.springframework.boot.autoconfigure.SpringBootApplication
import org.springframework.boot.autoconfigure.r2dbc.R2dbcAutoConfiguration
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication
import org.springframework.boot.context.event.ApplicationReadyEvent
import org.springframework.boot.web.embedded.netty.NettyReactiveWebServerFactory
import org.springframework.boot.web.embedded.tomcat.TomcatWebServer
import org.springframework.boot.web.servlet.context.ServletWebServerInitializedEvent
import org.springframework.context.ConfigurableApplicationContext
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration
import org.springframework.context.event.EventListener
import org.springframework.core.env.Environment
import kotlin.system.exitProcess

/** The pg clients are plain libraries the backends configure themselves (PgBackend.kt): no
 *  auto-configured R2DBC connection factory without a URL. */
@SpringBootApplication(exclude = [R2dbcAutoConfiguration::class])
class IolabApp {
    /** Prints `http://127.0.0.1:PORT` (the real port, also for port 0) when ready. */
    @EventListener
    fun ready(event: ApplicationReadyEvent) {
        val settings = event.applicationContext.getBean(Settings::class.java)
        if (settings.warmup > 0) Warmup.run(url(event.applicationContext.environment), settings.warmup)
        val metrics = settings.metricsPort?.let(MetricsListener::start)
        if (event.applicationContext.environment.getProperty("iolab.print-url", "true") == "true") {
            println(url(event.applicationContext.environment))
            metrics?.let { println("metrics $it") }
            System.out.flush()
        }
    }

    /** Tomcat's executor queue is where a full `pool` keeps requests waiting for a thread. */
    @EventListener
    fun tomcatStarted(event: ServletWebServerInitializedEvent) {
        val server = event.webServer as? TomcatWebServer ?: return
        val executor = server.tomcat.connector.protocolHandler.executor
        if (executor is ThreadPoolExecutor) {
            Counters.queued = java.util.function.LongSupplier { executor.queue.size.toLong() }
        }
    }
}

/** With Tomcat on the classpath too, a reactive context must be told to use Netty. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
class NettyServer {
    @Bean
    fun nettyFactory() = NettyReactiveWebServerFactory().apply {
        addServerCustomizers(ResumeReadAfterAnswer.customizer())
    }
}

/** The URL the target serves on. */
fun url(env: Environment) = "http://127.0.0.1:${env.getProperty("local.server.port")}"

/** Start a target for [args] (`--iolab.model=...`, `--server.port=...`); throws [UsageError]. */
fun start(args: Array<String>): ConfigurableApplicationContext {
    val settings = Settings.fromArgs(args)
    settings.applySystemProperties()
    Counters.queued = java.util.function.LongSupplier { 0 }
    val app = SpringApplication(IolabApp::class.java)
    app.webApplicationType = if (settings.model.servlet) WebApplicationType.SERVLET else WebApplicationType.REACTIVE
    app.setDefaultProperties(settings.springProperties())
    app.addInitializers({ ctx -> ctx.beanFactory.registerSingleton("iolabSettings", settings) })
    return app.run(*args)
}

/** Longest a SIGTERM may take: Netty's graceful shutdown needs its loop threads, which under
 *  `loop-blocking` may be asleep for a long queue of requests. */
private const val SHUTDOWN_GRACE_MS = 3_000L

fun main(args: Array<String>) {
    Runtime.getRuntime().addShutdownHook(
        Thread.ofPlatform().daemon(true).unstarted {
            Thread.sleep(SHUTDOWN_GRACE_MS)
            Runtime.getRuntime().halt(143)
        },
    )
    try {
        start(args)
    } catch (e: UsageError) {
        System.err.println("error: ${e.message}")
        exitProcess(2)
    }
}
