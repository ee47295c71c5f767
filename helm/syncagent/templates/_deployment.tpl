{{- define "syncagent.deployment" -}}
{{- $root := .root }}
{{- $shard := .shard }}
{{- $name := include "syncagent.fullname" $root }}
{{- with $shard.name }}
{{- $name = include "syncagent.suffixed" (list $root .) }}
{{- end }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "syncagent.labels" $root | nindent 4 }}
spec:
  replicas: {{ $root.Values.replicaCount }}
  selector:
    matchLabels:
      {{- include "syncagent.selectorLabels" $root | nindent 6 }}
      {{- with $shard.name }}
      syncagent.io/shard: {{ . }}
      {{- end }}
  strategy:
    # Under leader election a surge replica only waits for the Lease; without it, never run
    # two agents at once.
    {{- if $root.Values.leaderElection.enabled }}
    type: RollingUpdate
    {{- else }}
    type: Recreate
    {{- end }}
  template:
    metadata:
      annotations:
        kubectl.kubernetes.io/default-container: agent
        {{- if and $root.Values.operatorConfig.config (not $root.Values.operatorConfig.existingConfigMap) }}
        # The agent reads the file once at start: a changed configuration rolls the pods.
        syncagent.io/operator-config-checksum: {{ toYaml $root.Values.operatorConfig.config | sha256sum | trunc 16 }}
        {{- end }}
        {{- with $root.Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      labels:
        {{- include "syncagent.labels" $root | nindent 8 }}
        {{- with $shard.name }}
        syncagent.io/shard: {{ . }}
        {{- end }}
        {{- with $root.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "syncagent.serviceAccountName" $root }}
      terminationGracePeriodSeconds: {{ $root.Values.terminationGracePeriodSeconds }}
      automountServiceAccountToken: true
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      containers:
        - name: agent
          image: {{ include "syncagent.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          command:
            {{- toYaml $root.Values.command | nindent 12 }}
          args:
            {{- include "syncagent.args" (dict "root" $root "shard" $shard) | nindent 12 }}
          env:
            # The leader-election identity starts with the pod name.
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
            # The root filesystem is read-only: no bytecode caches.
            - name: PYTHONDONTWRITEBYTECODE
              value: "1"
            - name: PYTHONUNBUFFERED
              value: "1"
            {{- with $root.Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          ports:
            - name: metrics
              containerPort: {{ $root.Values.metrics.port }}
              protocol: TCP
            - name: health
              containerPort: {{ $root.Values.health.port }}
              protocol: TCP
            {{- if $root.Values.history.enabled }}
            - name: history
              containerPort: {{ $root.Values.history.port }}
              protocol: TCP
            {{- end }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: health
            {{- toYaml $root.Values.livenessProbe | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: health
            {{- toYaml $root.Values.readinessProbe | nindent 12 }}
          resources:
            {{- toYaml $root.Values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          volumeMounts:
            # Python and its libraries may want a scratch directory; nothing else is writable.
            - name: tmp
              mountPath: /tmp
            {{- if and $root.Values.metrics.secure $root.Values.metrics.certSecret }}
            # The serving certificate of /metrics; the agent follows it as it is renewed.
            - name: metrics-tls
              mountPath: /etc/syncagent/metrics-tls
              readOnly: true
            {{- end }}
            {{- if include "syncagent.operatorConfigMap" $root }}
            # Upstream's OperatorConfiguration (--operator-config).
            - name: operator-config
              mountPath: /etc/syncagent/operator-config
              readOnly: true
            {{- end }}
            {{- if $root.Values.history.enabled }}
            # The history port's serving pair (the APIService's caBundle signs it).
            - name: history-tls
              mountPath: /etc/syncagent/history-tls
              readOnly: true
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
        {{- if and $root.Values.metrics.secure $root.Values.metrics.certSecret }}
        - name: metrics-tls
          secret:
            secretName: {{ $root.Values.metrics.certSecret }}
            # Optional: the pod starts (self-signed) before cert-manager has issued it.
            optional: true
            items:
              - {key: tls.crt, path: tls.crt}
              - {key: tls.key, path: tls.key}
        {{- end }}
        {{- with include "syncagent.operatorConfigMap" $root }}
        - name: operator-config
          configMap:
            name: {{ . }}
            items:
              - {key: {{ $root.Values.operatorConfig.key }}, path: {{ $root.Values.operatorConfig.key }}}
        {{- end }}
        {{- if $root.Values.history.enabled }}
        - name: history-tls
          secret:
            secretName: {{ include "syncagent.historyCertSecret" $root }}
            # Optional: the pod starts (self-signed, unusable) before cert-manager has issued it.
            optional: true
            items:
              - {key: tls.crt, path: tls.crt}
              - {key: tls.key, path: tls.key}
        {{- end }}
      {{- with $root.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if $root.Values.affinity }}
      affinity:
        {{- toYaml $root.Values.affinity | nindent 8 }}
      {{- else if $root.Values.podAntiAffinity }}
      affinity:
        {{- include "syncagent.antiAffinity" (dict "root" $root "shard" $shard) | nindent 8 }}
      {{- end }}
      {{- with $root.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}

{{/* One replica per node, for the pods of one agent Deployment; (dict "root" . "shard" $shard). */}}
{{- define "syncagent.antiAffinity" -}}
{{- $term := dict "topologyKey" "kubernetes.io/hostname" "labelSelector" (dict "matchLabels" (include "syncagent.podSelector" . | fromYaml)) -}}
podAntiAffinity:
{{- if eq .root.Values.podAntiAffinity "hard" }}
  requiredDuringSchedulingIgnoredDuringExecution:
    - {{ toJson $term }}
{{- else }}
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm: {{ toJson $term }}
{{- end }}
{{- end }}

{{/* The labels that select the pods of one agent Deployment; (dict "root" . "shard" $shard). */}}
{{- define "syncagent.podSelector" -}}
{{ include "syncagent.selectorLabels" .root }}
{{- with .shard.name }}
syncagent.io/shard: {{ . }}
{{- end }}
{{- end }}
