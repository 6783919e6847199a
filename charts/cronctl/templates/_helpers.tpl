{{/* The chart name, or nameOverride. */}}
{{- define "cronctl.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The resource name prefix: fullnameOverride, else <release>-<name> (just the release
name when it already contains the chart name). */}}
{{- define "cronctl.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "cronctl.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object the chart renders. */}}
{{- define "cronctl.labels" -}}
helm.sh/chart: {{ include "cronctl.chart" . }}
{{ include "cronctl.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: cronctl
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The labels the Deployment selects its Pods by (never change them in an upgrade). */}}
{{- define "cronctl.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cronctl.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The operator Deployments, as a YAML list of {name, shard, lease}: the default shard's
(shard ""), then one per entry of .Values.shards. */}}
{{- define "cronctl.instances" -}}
{{- $fullname := include "cronctl.fullname" . }}
{{- $instances := list }}
{{- if .Values.defaultShard }}
{{- $instances = append $instances (dict "name" $fullname "shard" "" "lease" .Values.leaderElection.leaseName) }}
{{- end }}
{{- range .Values.shards }}
{{- $instances = append $instances (dict "name" (printf "%s-shard-%s" $fullname . | trunc 63 | trimSuffix "-") "shard" . "lease" (printf "%s-%s" $.Values.leaderElection.leaseName .)) }}
{{- end }}
{{- toYaml $instances }}
{{- end }}

{{/* The labels one Deployment selects its Pods by: a shard's add cronctl.dev/shard. */}}
{{- define "cronctl.instanceSelectorLabels" -}}
{{ include "cronctl.selectorLabels" .root }}
{{- if .instance.shard }}
cronctl.dev/shard: {{ .instance.shard | quote }}
{{- end }}
{{- end }}

{{/* The label selector of one Deployment's Pods, for what else selects them (the
disruption budget, the spread): its matchLabels, and for the default shard the
absence of cronctl.dev/shard, since the shards' Pods carry its labels too. */}}
{{- define "cronctl.podSelector" -}}
matchLabels:
  {{- include "cronctl.instanceSelectorLabels" . | nindent 2 }}
{{- if not .instance.shard }}
matchExpressions:
  - {key: cronctl.dev/shard, operator: DoesNotExist}
{{- end }}
{{- end }}

{{/* topologySpreadConstraints of one Deployment's Pods: the values' own (each given
the Pods' selector when it has none), else, with replicas > 1 and spreadReplicas,
one over nodes that the scheduler prefers but never waits for. */}}
{{- define "cronctl.topologySpread" -}}
{{- $root := .root }}
{{- $selector := include "cronctl.podSelector" . | fromYaml }}
{{- $constraints := list }}
{{- if $root.Values.topologySpreadConstraints }}
{{- range $root.Values.topologySpreadConstraints }}
{{- $constraint := deepCopy . }}
{{- if not (hasKey $constraint "labelSelector") }}
{{- $_ := set $constraint "labelSelector" $selector }}
{{- end }}
{{- $constraints = append $constraints $constraint }}
{{- end }}
{{- else if and $root.Values.spreadReplicas (gt (int $root.Values.replicas) 1) }}
{{- $constraints = list (dict "maxSkew" 1 "topologyKey" "kubernetes.io/hostname" "whenUnsatisfiable" "ScheduleAnyway" "labelSelector" $selector) }}
{{- end }}
{{- if $constraints }}
{{- toYaml $constraints }}
{{- end }}
{{- end }}

{{/* The same selector as a kubectl -l string. */}}
{{- define "cronctl.selectorString" -}}
{{- $parts := list }}
{{- range $key, $value := include "cronctl.instanceSelectorLabels" . | fromYaml }}
{{- $parts = append $parts (printf "%s=%s" $key $value) }}
{{- end }}
{{- if not .instance.shard }}
{{- $parts = append $parts "!cronctl.dev/shard" }}
{{- end }}
{{- join "," $parts }}
{{- end }}

{{- define "cronctl.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "cronctl.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "cronctl.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The rules the operator needs in every namespace it watches; one list for the
ClusterRole (all namespaces) and the per-namespace Roles. Each verb is a call the
operator makes (cronctl/operator/apply.py) or a watch kopf keeps (handlers.py):
  cronschedules         get (read before a reconcile), list + watch (kopf's watch)
  cronschedules/status  patch (the status the core's state lives in)
  jobs                  get (adopt after a name conflict), list + watch (the runs of
                        the schedules: jobwatch.py), create (a launch), delete
                        (Replace, retention), patch (release a staged Job, resume
                        one held for its jitter, relabel one moved between shards)
  events                create (Launched, Skipped, Replaced, ... on the CronSchedule), patch
                        (an Event series' count, as client-go's recorder writes it) */}}
{{- define "cronctl.namespacedRules" -}}
- apiGroups: ["cronctl.dev"]
  resources: ["cronschedules"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["cronctl.dev"]
  resources: ["cronschedules/status"]
  verbs: ["patch"]
# A Job's ownerReference to its CronSchedule sets blockOwnerDeletion, which the admission
# plugin OwnerReferencesPermissionEnforcement (OpenShift's) allows only to who may update the
# owner's finalizers: without this every Job create is refused there.
- apiGroups: ["cronctl.dev"]
  resources: ["cronschedules/finalizers"]
  verbs: ["update"]
- apiGroups: ["cronctl.dev"]
  resources: ["cronpools"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["cronctl.dev"]
  resources: ["cronpools/status"]
  verbs: ["patch"]
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["get", "list", "watch", "create", "delete", "patch"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end }}

{{/* Refuse values that would deploy something unsafe or broken. */}}
{{- define "cronctl.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) }}
{{- fail (printf "replicas: %d needs leaderElection.enabled: true (without it every replica would launch the same Jobs)" (int .Values.replicas)) }}
{{- end }}
{{- if not (include "cronctl.instances" . | fromYamlArray) }}
{{- fail "defaultShard: false and no shards: no operator would run (name a shard in shards, or set defaultShard: true)" }}
{{- end }}
{{- if and .Values.metrics.enabled (eq (int .Values.metrics.port) (int .Values.healthPort)) }}
{{- fail (printf "metrics.port and healthPort are both %d: they must differ" (int .Values.healthPort)) }}
{{- end }}
{{- end }}
