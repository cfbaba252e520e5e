//! The deployment examples in `deploy/` and the `Dockerfile` agree with the service and with each
//! other: the probes call a real route on the port the container listens on, the container is
//! locked down, and the Service and autoscaler point at the Deployment. The self-play Job runs the
//! same image, as locked down, and its pods play the chunks of one run with the binary's own flags.
//!
//! The files are parsed with serde_yaml, so a misspelt key or a wrong nesting fails here instead
//! of in a cluster. Run `.ci/docker-check.sh` for the image itself.

use crate::common;

use advisor2048::server::{router, AppState, ServerConfig};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_yaml::Value;
use tower::ServiceExt;

const DEPLOYMENT: &str = include_str!("../../deploy/k8s/deployment.yaml");
const SERVICE: &str = include_str!("../../deploy/k8s/service.yaml");
const HPA: &str = include_str!("../../deploy/k8s/hpa.yaml");
const SIMULATE_JOB: &str = include_str!("../../deploy/k8s/simulate-job.yaml");
const COMPOSE: &str = include_str!("../../deploy/compose.yaml");
const DOCKERFILE: &str = include_str!("../../Dockerfile");

/// The port the image listens on (`ADVISOR_LISTEN=0.0.0.0:2048`, `EXPOSE 2048`).
const CONTAINER_PORT: u64 = 2048;

/// The health route: cheap, answers 200 while the process can serve.
const HEALTH_PATH: &str = "/healthz";

fn parse(name: &str, text: &str) -> Value {
    serde_yaml::from_str(text).unwrap_or_else(|err| panic!("{name} is not valid YAML: {err}"))
}

/// The value at a dotted `path` (`spec.template.spec.containers.0`), numbers indexing sequences.
/// Panics with the document name and the path when something is missing.
fn at<'a>(doc_name: &str, value: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(value, |node, key| {
        let next = match key.parse::<usize>() {
            Ok(index) => node.get(index),
            Err(_) => node.get(key),
        };
        next.unwrap_or_else(|| panic!("{doc_name}: missing `{path}` (no `{key}`)"))
    })
}

fn str_at<'a>(doc_name: &str, value: &'a Value, path: &str) -> &'a str {
    at(doc_name, value, path)
        .as_str()
        .unwrap_or_else(|| panic!("{doc_name}: `{path}` is not a string"))
}

fn deployment() -> Value {
    parse("deployment.yaml", DEPLOYMENT)
}

/// The one container of the Deployment's pod template.
fn container(deployment: &Value) -> &Value {
    only_container("deployment.yaml", deployment)
}

/// The one container of a workload's pod template.
fn only_container<'a>(doc_name: &str, workload: &'a Value) -> &'a Value {
    let containers = at(doc_name, workload, "spec.template.spec.containers")
        .as_sequence()
        .unwrap_or_else(|| panic!("{doc_name}: containers is a list"));
    assert_eq!(containers.len(), 1, "{doc_name}: exactly one container");
    &containers[0]
}

/// A port given as a number or as the name of one of the container's ports, as a number.
fn resolve_port(container: &Value, port: &Value) -> u64 {
    if let Some(number) = port.as_u64() {
        return number;
    }
    let name = port.as_str().expect("a port is a number or a name");
    at("deployment.yaml", container, "ports")
        .as_sequence()
        .expect("deployment.yaml: ports is a list")
        .iter()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|p| p.get("containerPort"))
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("deployment.yaml: no container port named `{name}`"))
}

/// A Kubernetes CPU quantity ("500m", "2", "0.5") in millicores.
fn millicores(quantity: &str) -> u64 {
    match quantity.strip_suffix('m') {
        Some(milli) => milli.parse().expect("cpu millicores"),
        None => (quantity.parse::<f64>().expect("cpu cores") * 1000.0).round() as u64,
    }
}

/// A memory quantity ("64Mi", "1Gi", "256M", "512k", "1048576") in bytes.
fn bytes(quantity: &str) -> u64 {
    const SUFFIXES: &[(&str, u64)] = &[
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("k", 1_000),
        ("K", 1_000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
    ];
    for (suffix, scale) in SUFFIXES {
        if let Some(number) = quantity.strip_suffix(suffix) {
            return number.parse::<u64>().expect("memory quantity") * scale;
        }
    }
    quantity.parse().expect("memory quantity in bytes")
}

/// The `USER uid[:gid]` of the Dockerfile's last stage, as a number.
fn dockerfile_uid() -> u64 {
    let user = DOCKERFILE
        .lines()
        .filter_map(|line| line.trim().strip_prefix("USER "))
        .next_back()
        .expect("the Dockerfile sets USER");
    let uid = user.trim().split(':').next().unwrap_or_default();
    uid.parse()
        .unwrap_or_else(|_| panic!("Dockerfile USER `{user}` is numeric, so runAsNonRoot can verify it"))
}

#[test]
fn quantity_parsers_read_kubernetes_units() {
    assert_eq!(millicores("500m"), 500);
    assert_eq!(millicores("2"), 2000);
    assert_eq!(millicores("0.25"), 250);
    assert_eq!(bytes("64Mi"), 64 << 20);
    assert_eq!(bytes("1Gi"), 1 << 30);
    assert_eq!(bytes("256M"), 256_000_000);
    assert_eq!(bytes("4096"), 4096);
}

/// `GET path` through the service's real router: the status and the body.
async fn get_from_router(path: &str) -> (StatusCode, serde_json::Value) {
    let response = router(AppState::new(ServerConfig::default()))
        .oneshot(Request::get(path).body(Body::empty()).expect("a request"))
        .await
        .expect("the router answers");
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .expect("a body");
    (status, serde_json::from_slice(&bytes).unwrap_or_default())
}

#[tokio::test]
async fn probes_are_http_gets_of_the_health_route_on_the_container_port() {
    let deployment = deployment();
    let container = container(&deployment);
    for probe in ["livenessProbe", "readinessProbe"] {
        let get = at("deployment.yaml", container, &format!("{probe}.httpGet"));
        let path = str_at("deployment.yaml", get, "path");
        assert_eq!(path, HEALTH_PATH, "{probe} checks the health route");
        // The route is the one openapi.yaml documents as the health check, and the real router answers it healthy.
        let documented = &common::openapi()["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]
            ["schema"]["$ref"];
        assert_eq!(
            documented, "#/components/schemas/Health",
            "{probe} path {path} is documented in openapi.yaml as a GET answering Health"
        );
        let (status, body) = get_from_router(path).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "{probe} path {path}: the router answers {status}"
        );
        common::assert_matches_schema("Health", &body);
        assert_eq!(body["status"], "ok", "{probe} path {path}: {body}");
        let port = resolve_port(container, at("deployment.yaml", get, "port"));
        assert_eq!(port, CONTAINER_PORT, "{probe} calls the port the service listens on");
    }
}

#[test]
fn container_listens_on_all_interfaces_at_the_container_port() {
    let deployment = deployment();
    let container = container(&deployment);
    let env = at("deployment.yaml", container, "env")
        .as_sequence()
        .expect("deployment.yaml: env is a list");
    let value_of = |name: &str| {
        env.iter()
            .find(|e| e.get("name").and_then(Value::as_str) == Some(name))
            .and_then(|e| e.get("value"))
            .and_then(Value::as_str)
    };
    assert_eq!(value_of("ADVISOR_LISTEN"), Some("0.0.0.0:2048"));
    for var in env {
        let name = str_at("deployment.yaml", var, "name");
        assert!(name.starts_with("ADVISOR_"), "{name}: settings are ADVISOR_* variables");
    }
    assert_eq!(resolve_port(container, &Value::from("http")), CONTAINER_PORT);
}

#[test]
fn container_runs_as_non_root_with_a_read_only_root_filesystem() {
    let deployment = deployment();
    let container = container(&deployment);
    let pod = at("deployment.yaml", &deployment, "spec.template.spec.securityContext");
    let own = at("deployment.yaml", container, "securityContext");

    // A container-level setting overrides the pod-level one.
    let effective = |key: &str| own.get(key).or_else(|| pod.get(key));
    assert_eq!(effective("runAsNonRoot").and_then(Value::as_bool), Some(true));
    assert_eq!(own.get("readOnlyRootFilesystem").and_then(Value::as_bool), Some(true));
    assert_eq!(
        own.get("allowPrivilegeEscalation").and_then(Value::as_bool),
        Some(false)
    );
    let drop = at("deployment.yaml", own, "capabilities.drop");
    assert_eq!(drop.as_sequence().map(Vec::len), Some(1));
    assert_eq!(str_at("deployment.yaml", drop, "0"), "ALL");

    let uid = effective("runAsUser").and_then(Value::as_u64);
    assert!(uid.is_some_and(|uid| uid != 0), "runAsUser is a non-root uid");
    assert_eq!(uid, Some(dockerfile_uid()), "runAsUser matches the image's USER");
}

#[test]
fn resources_have_cpu_and_memory_requests_within_limits() {
    let deployment = deployment();
    let container = container(&deployment);
    let resources = at("deployment.yaml", container, "resources");
    let quantity = |path: &str| str_at("deployment.yaml", resources, path).to_owned();

    let (cpu_request, cpu_limit) = (quantity("requests.cpu"), quantity("limits.cpu"));
    assert!(millicores(&cpu_request) > 0);
    assert!(
        millicores(&cpu_request) <= millicores(&cpu_limit),
        "cpu request <= limit"
    );

    let (memory_request, memory_limit) = (quantity("requests.memory"), quantity("limits.memory"));
    assert!(bytes(&memory_request) > 0);
    assert!(
        bytes(&memory_request) <= bytes(&memory_limit),
        "memory request <= limit"
    );
}

#[test]
fn service_selects_the_pods_and_targets_the_container_port() {
    let deployment = deployment();
    let service = parse("service.yaml", SERVICE);
    assert_eq!(str_at("service.yaml", &service, "kind"), "Service");

    let pod_labels = at("deployment.yaml", &deployment, "spec.template.metadata.labels");
    let selector = at("service.yaml", &service, "spec.selector")
        .as_mapping()
        .expect("service.yaml: selector is a mapping");
    assert!(!selector.is_empty(), "the Service selects something");
    for (key, value) in selector {
        assert_eq!(
            pod_labels.get(key),
            Some(value),
            "pods carry the selector label {key:?}"
        );
    }

    let ports = at("service.yaml", &service, "spec.ports")
        .as_sequence()
        .expect("service.yaml: ports is a list");
    assert!(!ports.is_empty());
    for port in ports {
        let target = resolve_port(container(&deployment), at("service.yaml", port, "targetPort"));
        assert_eq!(target, CONTAINER_PORT, "the Service forwards to the container port");
    }
}

#[test]
fn autoscaler_scales_the_deployment_on_cpu() {
    let deployment = deployment();
    let hpa = parse("hpa.yaml", HPA);
    assert_eq!(str_at("hpa.yaml", &hpa, "apiVersion"), "autoscaling/v2");
    assert_eq!(str_at("hpa.yaml", &hpa, "kind"), "HorizontalPodAutoscaler");

    let target = at("hpa.yaml", &hpa, "spec.scaleTargetRef");
    assert_eq!(str_at("hpa.yaml", target, "apiVersion"), "apps/v1");
    assert_eq!(str_at("hpa.yaml", target, "kind"), "Deployment");
    assert_eq!(
        str_at("hpa.yaml", target, "name"),
        str_at("deployment.yaml", &deployment, "metadata.name"),
        "the autoscaler targets the Deployment by name"
    );

    let min = at("hpa.yaml", &hpa, "spec.minReplicas").as_u64().expect("minReplicas");
    let max = at("hpa.yaml", &hpa, "spec.maxReplicas").as_u64().expect("maxReplicas");
    assert!(
        1 <= min && min <= max,
        "1 <= minReplicas ({min}) <= maxReplicas ({max})"
    );

    let metrics = at("hpa.yaml", &hpa, "spec.metrics")
        .as_sequence()
        .expect("hpa.yaml: metrics is a list");
    let cpu = metrics
        .iter()
        .find(|m| {
            m.get("type").and_then(Value::as_str) == Some("Resource")
                && m.get("resource").and_then(|r| r.get("name")).and_then(Value::as_str) == Some("cpu")
        })
        .expect("hpa.yaml: a Resource metric on cpu");
    assert_eq!(str_at("hpa.yaml", cpu, "resource.target.type"), "Utilization");
    let utilization = at("hpa.yaml", cpu, "resource.target.averageUtilization")
        .as_u64()
        .expect("averageUtilization is a number");
    assert!((1..=100).contains(&utilization));
}

#[test]
fn compose_runs_the_service_with_its_own_health_check() {
    let compose = parse("compose.yaml", COMPOSE);
    let service = at("compose.yaml", &compose, "services.advisor2048");

    let test: Vec<&str> = at("compose.yaml", service, "healthcheck.test")
        .as_sequence()
        .expect("compose.yaml: healthcheck.test is an exec-form list")
        .iter()
        .map(|part| part.as_str().expect("healthcheck.test holds strings"))
        .collect();
    assert_eq!(test.first(), Some(&"CMD"), "exec form: the image has no shell");
    assert!(
        test.get(1).is_some_and(|program| program.ends_with("advisor2048")),
        "the health check runs the advisor binary: {test:?}"
    );
    assert_eq!(test.get(2), Some(&"healthcheck"), "{test:?}");

    assert_eq!(
        str_at("compose.yaml", service, "environment.ADVISOR_LISTEN"),
        "0.0.0.0:2048"
    );
    let published = str_at("compose.yaml", service, "ports.0");
    assert!(
        published.ends_with(&format!(":{CONTAINER_PORT}")),
        "compose publishes the container port: {published}"
    );
    let restart = str_at("compose.yaml", service, "restart");
    assert!(
        ["always", "unless-stopped", "on-failure"].contains(&restart),
        "restart: {restart}"
    );
    assert_eq!(at("compose.yaml", service, "read_only").as_bool(), Some(true));
    let limits = at("compose.yaml", service, "deploy.resources.limits");
    assert!(millicores(str_at("compose.yaml", limits, "cpus")) > 0);
    assert!(bytes(str_at("compose.yaml", limits, "memory")) > 0);
}

#[test]
fn dockerfile_exposes_the_port_and_checks_itself() {
    let instruction = |name: &str| -> Vec<&str> {
        DOCKERFILE
            .lines()
            .map(str::trim)
            .filter(|line| line.starts_with(&format!("{name} ")))
            .collect()
    };
    assert_eq!(instruction("EXPOSE"), [format!("EXPOSE {CONTAINER_PORT}").as_str()]);
    assert!(dockerfile_uid() != 0, "the image runs as a non-root user");

    // HEALTHCHECK continues on the next line: the exec-form CMD follows it.
    let healthcheck = DOCKERFILE
        .split("HEALTHCHECK")
        .nth(1)
        .expect("the Dockerfile has a HEALTHCHECK");
    let cmd = healthcheck
        .lines()
        .find(|l| l.contains("CMD"))
        .expect("HEALTHCHECK CMD");
    assert!(
        cmd.contains(r#"["/usr/local/bin/advisor2048", "healthcheck"]"#),
        "exec-form self check without curl: {cmd}"
    );
    assert_eq!(
        instruction("ENTRYPOINT"),
        [r#"ENTRYPOINT ["/usr/local/bin/advisor2048", "serve"]"#],
        "exec form, so the service is PID 1 and receives SIGTERM"
    );
    assert!(
        DOCKERFILE.contains("ADVISOR_LISTEN=0.0.0.0:2048"),
        "the image serves on all interfaces"
    );
}

#[test]
fn compose_reserves_what_the_deployment_requests() {
    let deployment = deployment();
    let resources = at("deployment.yaml", container(&deployment), "resources");
    let compose = parse("compose.yaml", COMPOSE);
    let service = at("compose.yaml", &compose, "services.advisor2048");
    for (kubernetes, compose_path) in [
        ("requests.memory", "deploy.resources.reservations.memory"),
        ("limits.memory", "deploy.resources.limits.memory"),
    ] {
        // Compose's "M" is Kubernetes' "Mi" (both 2^20 bytes).
        let compose_quantity = str_at("compose.yaml", service, compose_path).replace('M', "Mi");
        assert_eq!(
            bytes(str_at("deployment.yaml", resources, kubernetes)),
            bytes(&compose_quantity),
            "{kubernetes} vs {compose_path}"
        );
    }
}

fn simulate_job() -> Value {
    parse("simulate-job.yaml", SIMULATE_JOB)
}

/// The Job container's arguments, as text.
fn job_args(container: &Value) -> Vec<String> {
    at("simulate-job.yaml", container, "args")
        .as_sequence()
        .expect("simulate-job.yaml: args is a list")
        .iter()
        .map(|arg| {
            arg.as_str()
                .expect("simulate-job.yaml: every argument is a string")
                .to_owned()
        })
        .collect()
}

/// The value of `--flag` in `args`, given as `--flag=value` or as `--flag value`.
fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .enumerate()
        .find_map(|(i, arg)| match arg.strip_prefix(name) {
            Some(value) if value.starts_with('=') => Some(&value[1..]),
            Some("") => args.get(i + 1).map(String::as_str),
            _ => None,
        })
}

/// Where the Kubernetes Job controller puts a pod's completion index (an annotation, from Kubernetes 1.21 on).
const COMPLETION_INDEX: &str = "metadata.annotations['batch.kubernetes.io/job-completion-index']";

#[test]
fn simulate_job_is_indexed_and_gives_each_pod_its_index_as_the_chunk() {
    let job = simulate_job();
    assert_eq!(str_at("simulate-job.yaml", &job, "apiVersion"), "batch/v1");
    assert_eq!(str_at("simulate-job.yaml", &job, "kind"), "Job");
    assert_eq!(str_at("simulate-job.yaml", &job, "spec.completionMode"), "Indexed");
    let completions = at("simulate-job.yaml", &job, "spec.completions")
        .as_u64()
        .expect("completions");
    let parallelism = at("simulate-job.yaml", &job, "spec.parallelism")
        .as_u64()
        .expect("parallelism");
    assert!(
        1 <= parallelism && parallelism <= completions,
        "1 <= parallelism ({parallelism}) <= completions ({completions})"
    );
    // A failed pod is replaced, not restarted in place, so the pod that succeeded holds its chunk's whole output.
    assert_eq!(
        str_at("simulate-job.yaml", &job, "spec.template.spec.restartPolicy"),
        "Never"
    );

    let container = only_container("simulate-job.yaml", &job);
    let env = at("simulate-job.yaml", container, "env")
        .as_sequence()
        .expect("simulate-job.yaml: env is a list");
    for var in env {
        let name = str_at("simulate-job.yaml", var, "name");
        assert!(name.starts_with("ADVISOR_"), "{name}: settings are ADVISOR_* variables");
    }
    let chunk = env
        .iter()
        .find(|e| e.get("name").and_then(Value::as_str) == Some("ADVISOR_CHUNK"))
        .expect("simulate-job.yaml: ADVISOR_CHUNK is set");
    assert_eq!(
        str_at("simulate-job.yaml", chunk, "valueFrom.fieldRef.fieldPath"),
        COMPLETION_INDEX,
        "ADVISOR_CHUNK is the pod's completion index"
    );

    // The image has no shell: the command is the binary itself, and its first argument the command `simulate`.
    let entrypoint: Vec<String> = DOCKERFILE
        .lines()
        .find_map(|line| line.trim().strip_prefix("ENTRYPOINT "))
        .and_then(|json| serde_json::from_str(json).ok())
        .expect("the Dockerfile's ENTRYPOINT is an exec-form list");
    let command = at("simulate-job.yaml", container, "command")
        .as_sequence()
        .expect("simulate-job.yaml: command is a list");
    assert_eq!(command.len(), 1, "the binary alone: {command:?}");
    assert_eq!(
        Some(str_at("simulate-job.yaml", container, "command.0")),
        entrypoint.first().map(String::as_str)
    );
    let args = job_args(container);
    assert_eq!(args.first().map(String::as_str), Some("simulate"));
    assert!(
        args.iter().any(|a| a == "--json"),
        "the chunk is printed as JSON: {args:?}"
    );
    for (flag_name, why) in [
        ("--first-game", "the pod's index picks its games"),
        ("--chunk", "ADVISOR_CHUNK gives it"),
        ("--trace", "a traced chunk is too large for a pod's log"),
    ] {
        assert!(
            flag(&args, flag_name).is_none() && !args.iter().any(|a| a == flag_name),
            "no {flag_name}: {why}"
        );
    }
    assert!(
        flag(&args, "--seed").is_some(),
        "the run's seed is written down: {args:?}"
    );
    assert!(
        flag(&args, "--games").is_some(),
        "the games per chunk are written down: {args:?}"
    );
}

#[test]
fn simulate_job_s_command_plays_the_pod_s_chunk_and_prints_only_its_json() {
    let job = simulate_job();
    let args = job_args(only_container("simulate-job.yaml", &job));
    let completions = at("simulate-job.yaml", &job, "spec.completions")
        .as_u64()
        .expect("completions");
    let games: u64 = flag(&args, "--games")
        .and_then(|g| g.parse().ok())
        .expect("--games is a number");
    let last = completions - 1;
    // The pod with the last index, with the run cut after a few moves (the whole chunk takes minutes).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_advisor2048"))
        .args(&args)
        .args(["--total-moves", "4"])
        .env("ADVISOR_CHUNK", last.to_string())
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    // `kubectl logs` gives standard error with standard output: the pod must print its JSON alone.
    assert!(stderr.is_empty(), "nothing on stderr: {stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON report");
    let indices: Vec<u64> = report["games"]
        .as_array()
        .expect("games")
        .iter()
        .map(|g| g["index"].as_u64().expect("index"))
        .collect();
    let first = last * games;
    assert_eq!(indices.first(), Some(&first), "chunk {last} starts at game {first}");
    assert!(
        indices.iter().all(|i| (first..first + games).contains(i)),
        "{indices:?}"
    );
}

#[test]
fn simulate_job_runs_the_deployment_s_image_locked_down_the_same_way() {
    let deployment = deployment();
    let job = simulate_job();
    let (api, pod) = (container(&deployment), only_container("simulate-job.yaml", &job));
    assert_eq!(
        at("simulate-job.yaml", pod, "image"),
        at("deployment.yaml", api, "image")
    );
    assert_eq!(
        at("simulate-job.yaml", pod, "securityContext"),
        at("deployment.yaml", api, "securityContext")
    );
    for path in [
        "spec.template.spec.securityContext",
        "spec.template.spec.automountServiceAccountToken",
    ] {
        assert_eq!(
            at("simulate-job.yaml", &job, path),
            at("deployment.yaml", &deployment, path),
            "{path}"
        );
    }
}

#[test]
fn simulate_job_asks_for_the_cores_its_threads_use() {
    let job = simulate_job();
    let container = only_container("simulate-job.yaml", &job);
    let resources = at("simulate-job.yaml", container, "resources");
    let quantity = |path: &str| str_at("simulate-job.yaml", resources, path).to_owned();
    let threads: u64 = flag(&job_args(container), "--threads")
        .and_then(|t| t.parse().ok())
        .expect("--threads is given: the default, the node's CPUs, is not the pod's share");
    // Self-play is CPU-bound: each thread plays a game, so it gets one whole core, no more.
    assert_eq!(millicores(&quantity("limits.cpu")), threads * 1000);
    assert!(millicores(&quantity("requests.cpu")) <= millicores(&quantity("limits.cpu")));
    assert!(bytes(&quantity("requests.memory")) > 0);
    assert!(bytes(&quantity("requests.memory")) <= bytes(&quantity("limits.memory")));
}

#[test]
fn the_service_sends_no_request_to_the_job_s_pods() {
    let service = parse("service.yaml", SERVICE);
    let job = simulate_job();
    let selector = at("service.yaml", &service, "spec.selector")
        .as_mapping()
        .expect("service.yaml: selector is a mapping");
    let pod_labels = at("simulate-job.yaml", &job, "spec.template.metadata.labels");
    assert!(
        selector.iter().any(|(key, value)| pod_labels.get(key) != Some(value)),
        "the Service's selector {selector:?} matches the Job's pods {pod_labels:?}, which serve nothing"
    );
}
